package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// ULPMetrics is the result of comparing two executors' outputs with each
// other (the fallback against the native backend), in float32 ULPs.
type ULPMetrics struct {
	Name string
	// Against names the executor measured against (Options.ULPBase, by
	// default the fallback); set by the runner, "" from ULP.
	Against string
	OK      bool // comparable, and NaN and Inf agree everywhere (ULPs are reported, not judged)

	Problem string // missing or malformed tensors, dtype or shape mismatch

	Total       int
	MaxULP      uint64 // over the elements where neither value is NaN and no Inf disagrees
	MaxULPIndex []int  // nil when no element qualified
	// NaNMismatches counts elements where exactly one side is NaN;
	// InfMismatches those where an infinity meets anything else (the other
	// infinity or a finite value). For int64 outputs, Mismatches counts
	// differing elements.
	NaNMismatches int
	InfMismatches int
	Mismatches    int

	Report string
}

// ULP compares two float32 tensors (or two int64 tensors) produced
// by two float32 executors and measures their distance in units in the
// last place.
//
// Rules:
//   - The ULP distance of two float32 values is the number of
//     representable float32 values between them, counting one end: 0 for
//     equal values, 1 for neighbours. +0 and −0 are the same value (distance
//     0); the smallest subnormal is 1 from zero; MaxFloat32 is 1 from +Inf.
//     The distance is symmetric.
//   - NaN must be NaN on both sides at the same index (payloads are not
//     compared); such elements have no distance.
//   - ±Inf must match exactly; a disagreement is counted in InfMismatches
//     and excluded from MaxULP.
//   - int64 tensors must be equal element by element (MaxULP stays 0).
//   - Other dtypes (float64 included), nil or malformed tensors and shape
//     differences are a Problem.
func ULP(name string, a, b *tensor.Tensor) ULPMetrics {
	m := ULPMetrics{Name: name}
	if p := compatible(a, b); p != "" {
		return m.fail(p)
	}
	if a.DType != b.DType || a.DType == tensor.Float64 {
		return m.fail(fmt.Sprintf("dtype mismatch: ULP comparison needs two float32 or two int64 tensors, have %s and %s", a.DType, b.DType))
	}
	m.Total = a.Len()
	if a.DType == tensor.Int64 {
		for i := range a.I64 {
			if a.I64[i] != b.I64[i] {
				m.Mismatches++
			}
		}
		m.OK = m.Mismatches == 0
		m.Report = fmt.Sprintf("%s: %d / %d differ", name, m.Mismatches, m.Total)
		return m
	}
	for i := range a.F32 {
		x, y := a.F32[i], b.F32[i]
		xn, yn := x != x, y != y
		switch {
		case xn || yn:
			if xn != yn {
				m.NaNMismatches++
			}
			continue
		case isInf32(x) || isInf32(y):
			if x != y {
				m.InfMismatches++
				continue
			}
		}
		if u := ulpDistance32(x, y); m.MaxULPIndex == nil || u > m.MaxULP {
			m.MaxULP, m.MaxULPIndex = u, tensor.Index(a.Shape, i)
		}
	}
	m.OK = m.NaNMismatches == 0 && m.InfMismatches == 0
	var s strings.Builder
	fmt.Fprintf(&s, "%s: max ULP distance %d", name, m.MaxULP)
	if m.MaxULPIndex != nil {
		fmt.Fprintf(&s, " at %s", tensor.FormatIndex(m.MaxULPIndex))
	}
	fmt.Fprintf(&s, " over %d elements", m.Total)
	if m.NaNMismatches > 0 {
		fmt.Fprintf(&s, "; %d NaN disagreements", m.NaNMismatches)
	}
	if m.InfMismatches > 0 {
		fmt.Fprintf(&s, "; %d Inf disagreements", m.InfMismatches)
	}
	m.Report = s.String()
	return m
}

func (m ULPMetrics) fail(problem string) ULPMetrics {
	m.Problem, m.OK = problem, false
	m.Report = m.Name + ": " + problem
	return m
}

func isInf32(x float32) bool { return math.IsInf(float64(x), 0) }

// ulpDistance32 returns the number of float32 steps between a and b,
// neither of which is NaN. Both are mapped onto a line of integers that is
// ordered like the floats (−0 and +0 both to 0) and the gap is measured.
func ulpDistance32(a, b float32) uint64 {
	x, y := orderedBits(a), orderedBits(b)
	if x > y {
		return uint64(x - y)
	}
	return uint64(y - x)
}

func orderedBits(f float32) int64 {
	u := math.Float32bits(f)
	if u&0x80000000 != 0 {
		return -int64(u & 0x7fffffff)
	}
	return int64(u)
}

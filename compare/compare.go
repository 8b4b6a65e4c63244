package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// Tolerance is the allowance of a float comparison against the oracle: an
// element passes when |got − want| ≤ ATol + RTol·|want|, want being the
// oracle's value. Both fields must be finite and non-negative; a zero
// Tolerance demands bit-for-bit equal values (with +0 equal to −0).
//
// With UseULP set an element must also be within ULP units in the last
// place of want rounded to float32 (the correctly rounded float32 result
// of what the oracle computes exactly): a per-op accuracy contract that
// a less accurate kernel fails even where it stays inside RTol and ATol.
// NoAbsRel drops the RTol/ATol test, leaving the ULP bound alone.
type Tolerance struct {
	RTol, ATol float64
	ULP        int64
	UseULP     bool
	NoAbsRel   bool
	// SignedZeros makes the sign of a zero part of its value: where the
	// oracle has +0 the executor must too, and −0 for −0
	// (//rx:signed-zeros, --signed-zeros). Such mismatches are counted
	// apart (OutputMetrics.SignedZeroMismatches).
	SignedZeros bool
}

// Allowed returns the greatest absolute difference accepted at an element
// whose oracle value is want: ATol + RTol·|want|.
//
// With NoAbsRel (a ULP bound alone) it is ULP+1 float32 spacings at want:
// a finite allowance in value terms that the near-tie rule, the noise
// excuse and reports can use, at least as wide as the ULP bound (want is
// a float64 that may lie between two float32 values), so the ULP test
// after it is what decides.
func (t Tolerance) Allowed(want float64) float64 {
	if t.NoAbsRel {
		return float64(t.ULP+1) * spacing32(want)
	}
	return t.ATol + t.RTol*math.Abs(want)
}

// spacing32 is the gap between the float32 values around |x| (the larger
// one where they differ); the largest finite gap beyond the float32 range.
func spacing32(x float64) float64 {
	a := float32(math.Abs(x))
	if math.IsInf(float64(a), 0) || a >= math.MaxFloat32 {
		return float64(math.MaxFloat32 - math.Nextafter32(math.MaxFloat32, 0))
	}
	up := math.Nextafter32(a, float32(math.Inf(1)))
	if a == 0 {
		return float64(up)
	}
	down := math.Nextafter32(a, 0)
	return math.Max(float64(up-a), float64(a-down))
}

// maxListed is how many mismatches a report lists.
const maxListed = 5

// Mismatch is one element that failed its comparison.
type Mismatch struct {
	Index []int   // multi-dimensional index
	Want  float64 // the reference value (int64 values converted)
	Got   float64 // the compared value (float32 and int64 values converted exactly)
	Int   bool    // the values are int64 and are printed as integers
}

// NearTie is a row of a class output where the oracle's best scores are
// within tolerance of each other, so more than one class is accepted.
type NearTie struct {
	Index   []int   // the row's index in the class tensor
	Classes []int64 // every accepted class, ascending
	Want    int64   // the oracle's class
	Got     int64   // the compared executor's class
}

// OutputMetrics is the result of comparing one output.
//
// The greatest absolute and relative differences are taken over the
// elements where both values are finite; the relative difference is
// |got − want| / |want| and is not defined (and skipped) where want is 0.
// MaxULP is the float32 ULP distance between float32(want) and got, over
// the elements where neither is NaN. None of the float fields is ever NaN
// or infinite, so the metrics always encode as JSON.
type OutputMetrics struct {
	Name string
	OK   bool // the output holds: no Problem and no mismatch

	// Problem is set when the tensors cannot be compared element by
	// element: a missing or malformed tensor, a dtype or a shape mismatch.
	Problem string

	Total      int // elements compared
	Mismatches int // elements outside tolerance (or with a NaN/Inf disagreement)
	// ULPMismatches counts the mismatches that were within RTol and ATol
	// but beyond the tolerance's ULP bound (Tolerance.UseULP).
	ULPMismatches int
	// NonFiniteMismatches counts the mismatches where a NaN or an infinity
	// meets anything but itself: their difference is not finite, so they
	// are not part of MaxAbsDiff or MaxRelDiff.
	NonFiniteMismatches int
	// SignedZeroMismatches counts the mismatches where both values are
	// zero of different signs (only with Tolerance.SignedZeros).
	SignedZeroMismatches int

	MaxAbsDiff    float64
	MaxAbsIndex   []int   // nil when no element had two finite values
	MaxAbsAllowed float64 // the allowance at MaxAbsIndex
	MaxRelDiff    float64
	MaxRelIndex   []int // nil when no element qualified
	MaxULP        uint64

	// WorstIndex is the mismatch that exceeds its allowance by the greatest
	// factor; a NaN or Inf disagreement counts as worse than any finite
	// excess (the first such one wins). Nil when nothing mismatched.
	WorstIndex []int

	First    []Mismatch // the first few mismatches in row-major order
	NearTies []NearTie  // rows accepted by the near-tie rule (Classes only)

	// Report is the human-readable summary, in the form
	//   probs: 3 / 128 mismatched (2.3%); greatest abs diff 4.1e-05 at [12 3] (allowed 1.0e-05); greatest rel diff 9.1e-05 at [12 3]; first mismatches: [12 3] want 0.4521 got 0.4521411, …
	Report string
}

// ToOracle compares got against the oracle's want, element by
// element, and summarises the result.
//
// Rules:
//   - want may be float64 (the oracle) or float32, got float32 or float64;
//     an int64 want needs an int64 got and is compared exactly (tol is not
//     used). Any other pairing, a nil or malformed tensor, or differing
//     shapes is a Problem, reported with both dtypes or shapes.
//   - Finite values pass when |got − want| ≤ tol.ATol + tol.RTol·|want|.
//     +0 and −0 are equal; subnormals are ordinary numbers.
//   - NaN must be NaN at the same index: a NaN on either side alone is a
//     mismatch, NaN against NaN passes (whatever its payload or sign).
//   - ±Inf must match exactly, sign included: +Inf against −Inf, or an
//     infinity against any finite value, is a mismatch whatever tol is.
//   - A float64 want beyond the float32 range against a float32 got is
//     compared as the infinity it rounds to: float32 cannot hold it, and
//     the correctly rounded float32 result (Exp(100), 1e38·10) is ±Inf.
func ToOracle(name string, want, got *tensor.Tensor, tol Tolerance) OutputMetrics {
	m := OutputMetrics{Name: name}
	if p := compatible(want, got); p != "" {
		return m.fail(p)
	}
	m.Total = want.Len()
	c := &collector{OutputMetrics: &m}
	if want.DType == tensor.Int64 {
		for i := range want.I64 {
			w, g := want.I64[i], got.I64[i]
			d := math.Abs(float64(g) - float64(w))
			c.observeFinite(want.Shape, i, float64(w), d, 0)
			if w != g {
				c.addMismatch(want.Shape, i, float64(w), float64(g), true, d)
			}
		}
		m.finish(true)
		return m
	}
	wv, gv := want.Float64s(), got.Float64s()
	narrow := want.DType == tensor.Float64 && got.DType == tensor.Float32
	for i := range wv {
		w, g := wv[i], gv[i]
		if narrow && math.Abs(w) > math.MaxFloat32 && !math.IsInf(w, 0) {
			if r := float64(float32(w)); math.IsInf(r, 0) {
				w = r
			}
		}
		if !math.IsNaN(w) && !math.IsNaN(g) {
			if u := ulpDistance32(float32(w), float32(g)); u > m.MaxULP {
				m.MaxULP = u
			}
		}
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				m.NonFiniteMismatches++
				c.addMismatch(want.Shape, i, w, g, false, math.Inf(1))
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if w != g {
				m.NonFiniteMismatches++
				c.addMismatch(want.Shape, i, w, g, false, math.Inf(1))
			}
		case tol.SignedZeros && w == 0 && g == 0 && math.Signbit(w) != math.Signbit(g):
			m.SignedZeroMismatches++
			c.addMismatch(want.Shape, i, w, g, false, math.Inf(1))
		default:
			d := math.Abs(g - w)
			allowed := tol.Allowed(w)
			c.observeFinite(want.Shape, i, w, d, allowed)
			if d > allowed {
				c.addMismatch(want.Shape, i, w, g, false, excess(d, allowed))
			} else if tol.UseULP {
				if u := ulpDistance32(float32(w), float32(g)); u > uint64(tol.ULP) {
					m.ULPMismatches++
					c.addMismatch(want.Shape, i, w, g, false, float64(u-uint64(tol.ULP)))
				}
			}
		}
	}
	m.finish(false)
	return m
}

// compatible returns why want and got cannot be compared element by
// element, or "" when they can.
func compatible(want, got *tensor.Tensor) string {
	switch {
	case want == nil && got == nil:
		return "both tensors are missing"
	case want == nil:
		return "the reference tensor is missing"
	case got == nil:
		return "the output is missing"
	}
	if err := want.Validate(); err != nil {
		return fmt.Sprintf("malformed reference tensor: %v", err)
	}
	if err := got.Validate(); err != nil {
		return fmt.Sprintf("malformed output tensor: %v", err)
	}
	isFloat := func(d tensor.DType) bool { return d == tensor.Float32 || d == tensor.Float64 }
	if (want.DType == tensor.Int64) != (got.DType == tensor.Int64) || !(isFloat(want.DType) || want.DType == tensor.Int64) || !(isFloat(got.DType) || got.DType == tensor.Int64) {
		return fmt.Sprintf("dtype mismatch: want %s, got %s", want.DType, got.DType)
	}
	if !slices.Equal(want.Shape, got.Shape) {
		return fmt.Sprintf("shape mismatch: want %v, got %v", want.Shape, got.Shape)
	}
	return ""
}

// excess is how far d exceeds its allowance, as a factor (infinite when
// nothing is allowed).
func excess(d, allowed float64) float64 {
	if allowed == 0 {
		return math.MaxFloat64
	}
	return d / allowed
}

func (m OutputMetrics) fail(problem string) OutputMetrics {
	m.Problem = problem
	m.OK = false
	m.Report = m.Name + ": " + problem
	return m
}

// observeFinite records the absolute and relative difference at flat
// index i, where both values are finite.
func (m *collector) observeFinite(shape []int, i int, w, d, allowed float64) {
	if m.MaxAbsIndex == nil || d > m.MaxAbsDiff {
		m.MaxAbsDiff, m.MaxAbsIndex, m.MaxAbsAllowed = d, tensor.Index(shape, i), allowed
	}
	if w != 0 {
		if r := d / math.Abs(w); m.MaxRelIndex == nil || r > m.MaxRelDiff {
			m.MaxRelDiff, m.MaxRelIndex = r, tensor.Index(shape, i)
		}
	}
}

// collector accumulates an OutputMetrics element by element.
type collector struct {
	*OutputMetrics
	worst float64 // the excess of WorstIndex
}

// addMismatch records a mismatch at flat index i whose difference exceeds
// its allowance by the factor exc.
func (m *collector) addMismatch(shape []int, i int, w, g float64, isInt bool, exc float64) {
	m.Mismatches++
	if len(m.First) < maxListed {
		m.First = append(m.First, Mismatch{Index: tensor.Index(shape, i), Want: w, Got: g, Int: isInt})
	}
	if m.WorstIndex == nil || exc > m.worst {
		m.WorstIndex = tensor.Index(shape, i)
		m.worst = exc
	}
}

// finish sets OK and the report text.
func (m *OutputMetrics) finish(isInt bool) {
	m.OK = m.Problem == "" && m.Mismatches == 0
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d / %d mismatched", m.Name, m.Mismatches, m.Total)
	if m.Mismatches > 0 {
		fmt.Fprintf(&b, " (%.1f%%)", 100*float64(m.Mismatches)/float64(m.Total))
	}
	if m.MaxAbsIndex != nil {
		fmt.Fprintf(&b, "; greatest abs diff %s at %s", fmtDiff(m.MaxAbsDiff, isInt), tensor.FormatIndex(m.MaxAbsIndex))
		if !isInt {
			fmt.Fprintf(&b, " (allowed %.1e)", m.MaxAbsAllowed)
		}
	}
	if m.MaxRelIndex != nil {
		fmt.Fprintf(&b, "; greatest rel diff %.1e at %s", m.MaxRelDiff, tensor.FormatIndex(m.MaxRelIndex))
	}
	writeFirst(&b, m.First, m.Mismatches)
	m.Report = b.String()
}

func fmtDiff(d float64, isInt bool) string {
	if isInt {
		return strconv.FormatFloat(d, 'f', -1, 64)
	}
	return strconv.FormatFloat(d, 'e', 1, 64)
}

// writeFirst appends "; first mismatches: [i j] want W got G, …".
func writeFirst(b *strings.Builder, first []Mismatch, total int) {
	if len(first) == 0 {
		return
	}
	b.WriteString("; first mismatches: ")
	for k, mm := range first {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s want %s got %s", tensor.FormatIndex(mm.Index), fmtValue(mm.Want, mm.Int, 64), fmtValue(mm.Got, mm.Int, 32))
	}
	if total > len(first) {
		fmt.Fprintf(b, ", … (%d more)", total-len(first))
	}
}

// fmtValue prints a value in its shortest exact form: the oracle's at
// float64 precision, the executors' at float32 precision.
func fmtValue(v float64, isInt bool, bits int) string {
	switch {
	case isInt:
		return strconv.FormatInt(int64(v), 10)
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0 && math.Signbit(v):
		return "-0"
	}
	if bits == 32 && float64(float32(v)) != v {
		bits = 64
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

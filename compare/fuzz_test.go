package compare_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/tensor"
)

// fuzzTensor decodes data as little-endian float32s, shaped [rows cols]
// (rank 1 when cols is 0 or does not divide the length).
func fuzzTensor(data []byte, cols uint8) *tensor.Tensor {
	n := len(data) / 4
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	if c := int(cols); c > 0 && n%c == 0 {
		return tensor.FromFloat32(v, n/c, c)
	}
	return tensor.FromFloat32(v, n)
}

func widen(t *tensor.Tensor) *tensor.Tensor {
	return tensor.FromFloat64(t.Float64s(), t.Shape...)
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// FuzzCompare checks invariants of the comparison on arbitrary float32
// data: it never panics; a tensor compared with itself widened to float64
// never mismatches (NaN against NaN and an infinity against itself pass);
// ULP distance is symmetric and zero against itself; counts stay in range
// and the metrics stay finite (so they always encode as JSON).
func FuzzCompare(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, []byte{1, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}, 1e-5, 1e-6, uint8(2))
	f.Fuzz(func(t *testing.T, a, b []byte, rtol, atol float64, cols uint8) {
		rtol, atol = math.Abs(rtol), math.Abs(atol)
		if !finite(rtol, atol) || rtol > 1e6 || atol > 1e6 {
			t.Skip("tolerances must be finite and modest")
		}
		tol := compare.Tolerance{RTol: rtol, ATol: atol}
		x, y := fuzzTensor(a, cols), fuzzTensor(b, cols)

		self := compare.ToOracle("self", widen(x), x, tol)
		if !self.OK || self.Mismatches != 0 || self.MaxULP != 0 {
			t.Fatalf("a tensor mismatches itself widened: %s (max ULP %d)", self.Report, self.MaxULP)
		}

		m := compare.ToOracle("y", widen(x), y, tol)
		if m.Problem == "" {
			if m.Total != x.Len() || m.Mismatches < 0 || m.Mismatches > m.Total || len(m.First) > 5 {
				t.Fatalf("counts out of range: %+v", m)
			}
			if m.OK != (m.Mismatches == 0) {
				t.Fatalf("OK %v with %d mismatches", m.OK, m.Mismatches)
			}
			if !finite(m.MaxAbsDiff, m.MaxRelDiff, m.MaxAbsAllowed) {
				t.Fatalf("non-finite metrics: %+v", m)
			}
		} else if sameShapes(x, y) {
			t.Fatalf("problem with equal shapes: %s", m.Problem)
		}

		u, v := compare.ULP("u", x, y), compare.ULP("v", y, x)
		if u.MaxULP != v.MaxULP || u.NaNMismatches != v.NaNMismatches || u.InfMismatches != v.InfMismatches || u.OK != v.OK {
			t.Fatalf("ULP comparison is not symmetric: %s vs %s", u.Report, v.Report)
		}
		if s := compare.ULP("s", x, x); !s.OK || s.MaxULP != 0 {
			t.Fatalf("a tensor differs from itself: %s", s.Report)
		}

		if x.Rank() == 2 {
			cls := tensor.NewInt64(x.Shape[0])
			for i := range cls.I64 {
				cls.I64[i] = int64(i % max(1, x.Shape[1]))
			}
			c := compare.Classes("c", cls, cls, widen(x), 1, tol)
			if !c.OK {
				t.Fatalf("equal classes mismatch: %s", c.Report)
			}
		}
	})
}

func sameShapes(a, b *tensor.Tensor) bool {
	if len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return true
}

//go:build cgo

package oracle_test

import (
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle/internal/ldref"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// denseInputs are float32 values as the oracle receives them: every
// 4099th bit pattern (both signs, so subnormals, normals, ±Inf and NaNs
// are sampled throughout), every 37th positive subnormal, and 20001 evenly
// spaced points in each range where a transcendental overflows,
// underflows, saturates or cancels: Exp near float32's overflow and
// through its subnormal results, Sigmoid below -88.7 and through -37
// (where 1 - tanh cancels) to its saturation at 18, Tanh through its
// saturation and near 0, Log near 1, and the edges themselves.
func denseInputs() []float32 {
	var xs []float32
	for u := uint64(0); u < 1<<32; u += 4099 {
		xs = append(xs, math.Float32frombits(uint32(u)))
	}
	for u := uint32(1); u < 1<<23; u += 37 {
		xs = append(xs, math.Float32frombits(u))
	}
	for _, r := range [][2]float32{{-105, -85}, {85, 89.5}, {-110, -30}, {-40, 20}, {-20, 20}, {-1e-3, 1e-3}, {0.9, 1.1}, {0, 4e-38}} {
		for i := range 20001 {
			xs = append(xs, r[0]+(r[1]-r[0])*float32(i)/20000)
		}
	}
	for _, e := range []float32{0, math.SmallestNonzeroFloat32, math.Float32frombits(0x007fffff), math.Float32frombits(0x00800000),
		math.MaxFloat32, float32(math.Inf(1)), float32(math.NaN()), 88.72283, 88.72284, -87.33655, -103.27893, -103.97208,
		9.010913, 9.0109135, 1, 0.5, 1 + 1.0/(1<<23), 1 - 1.0/(1<<24)} {
		xs = append(xs, e, -e, math.Nextafter32(e, float32(math.Inf(1))), math.Nextafter32(e, float32(math.Inf(-1))))
	}
	return xs
}

// accuracy is the error of one function over the inputs against the long
// double reference: the greatest error in float64 ULPs and its input, and
// how many results rounded to float32 differ from the reference rounded to
// float32 once.
type accuracy struct {
	maxULP   float64
	worstX   float32
	float32s int // float32(got) != the reference rounded to float32
}

func measure(op ldref.Op, xs []float32, got func(i int) float64) accuracy {
	var a accuracy
	for i, x := range xs {
		g := got(i)
		if u := ldref.ULPs(op, float64(x), g); u > a.maxULP || (math.IsNaN(u) && !math.IsNaN(a.maxULP)) {
			a.maxULP, a.worstX = u, x
		}
		want := ldref.Float32(op, float64(x))
		if f := float32(g); f != want && !(f != f && want != want) {
			a.float32s++
		}
	}
	return a
}

var _ = Describe("the oracle's transcendentals against the C library's long double functions", func() {
	BeforeEach(func() {
		if p := ldref.Precision(); p < 64 {
			Skip(fmt.Sprintf("the C long double has %d significand bits here: no more precise than the oracle's float64", p))
		}
	})

	xs := denseInputs()
	in := tensor.FromFloat32(xs, len(xs))

	// The bounds are the functions' own: Go's math.Exp and math.Log are
	// within 1 ULP (the oracle's Exp near overflow, e^(x-1)·e, within 2),
	// math.Sqrt is correctly rounded, math.Tanh (Cephes' rational
	// approximation) within 2; Sigmoid, 1/(1+exp(-x)), adds two roundings
	// to Exp's error. Any of them keeps the float64 value within
	// 2^-50 of the exact one, so that rounding it to float32 gives the
	// correctly rounded result: not one of the inputs rounds differently.
	DescribeTable("builtin by builtin, tails included",
		func(b program.Builtin, op ldref.Op, bound float64) {
			y := apply(f32(len(xs)), f32(len(xs)), func(x program.Expr) program.Expr { return call(b, x) }, in)
			a := measure(op, xs, func(i int) float64 { return y.F64[i] })
			AddReportEntry(op.String(), fmt.Sprintf("max %.3g float64 ULP at x=%v; %d of %d float32 roundings differ", a.maxULP, a.worstX, a.float32s, len(xs)))
			Expect(a.maxULP).To(BeNumerically("<=", bound), "%v: worst input %v (%#x)", op, a.worstX, math.Float32bits(a.worstX))
			Expect(a.float32s).To(BeZero(), "%v: results that round to another float32 than the reference", op)
		},
		Entry("Exp", program.Exp, ldref.Exp, 2.0),
		Entry("Log", program.Log, ldref.Log, 1.0),
		Entry("Tanh", program.Tanh, ldref.Tanh, 2.0),
		Entry("Sqrt", program.Sqrt, ldref.Sqrt, 0.5),
		Entry("Sigmoid", program.Sigmoid, ldref.Sigmoid, 3.0),
	)

	DescribeTable("would catch a Sigmoid computed another way, exact in real arithmetic",
		func(f func(x float64) float64, below float32) {
			a := measure(ldref.Sigmoid, xs, func(i int) float64 { return f(float64(xs[i])) })
			Expect(a.maxULP).To(BeNumerically(">", 1e6))
			Expect(a.worstX).To(BeNumerically("<", below))
		},
		Entry("0.5*(1+tanh(x/2)), which cancels to 0 below about -37 (and rounds to float32 wrongly there)",
			func(x float64) float64 { return 0.5 * (1 + math.Tanh(x/2)) }, float32(-37)),
		Entry("1/(1+exp(-x)) throughout, whose exp(-x) overflows float64 below -709.78",
			func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, float32(-709)),
	)

	It("sees the cancelling Sigmoid in float32 too: thousands of its results round to another float32", func() {
		a := measure(ldref.Sigmoid, xs, func(i int) float64 { return 0.5 * (1 + math.Tanh(float64(xs[i])/2)) })
		Expect(a.float32s).To(BeNumerically(">", 1000))
	})
})

//go:build cgo

package native_test

import (
	"context"
	"math"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// The expected values below are worked out by hand (or with Go's float64
// math, rounded once) — never taken from any executor's output.
var _ = Describe("ops", Label("native"), Ordered, func() {
	var prog *native.Program
	var irp *ir.Program
	a23 := func() *tensor.Tensor { return f32(sh(2, 3), 1, -2, 3, -4, 5, -6) }

	BeforeAll(func() {
		src, err := os.ReadFile("testdata/ops.rx")
		Expect(err).NotTo(HaveOccurred())
		_, irp = parse("ops.rx", string(src))
		prog = compile(irp)
	})

	It("computes broadcasting elementwise arithmetic in float32", func() {
		out := run(prog, "elem", map[string]*tensor.Tensor{"a": a23(), "b": f32(sh(3), 10, 20, -30), "c": f32(sh(2, 1), 2, 0.5)})
		Expect(out["add"].F32).To(Equal([]float32{11, 18, -27, 6, 25, -36}))
		Expect(out["sub"].F32).To(Equal([]float32{-1, -4, 1, -4.5, 4.5, -6.5}))
		Expect(out["mul"].F32).To(Equal([]float32{10, -40, -90, -40, 100, 180}))
		Expect(out["div"].F32).To(Equal([]float32{1.0 / 10, -2.0 / 20, 3.0 / -30, -4.0 / 10, 5.0 / 20, -6.0 / -30}))
		Expect(out["neg"].F32).To(Equal([]float32{-1, 2, -3, 4, -5, 6}))
		Expect(out["mx"].F32).To(Equal([]float32{10, 20, 3, 10, 20, -6}))
		Expect(out["mn"].F32).To(Equal([]float32{1, -2, 2, -4, 0.5, -6}))
		Expect(out["lit"].F32).To(Equal([]float32{1.5, -6, 6.5, -11, 11.5, -16}))
		Expect(out["add"].Shape).To(Equal([]int{2, 3}))
	})

	It("propagates NaN through Maximum and Minimum", func() {
		nan := float32(math.NaN())
		out := run(prog, "elem", map[string]*tensor.Tensor{"a": f32(sh(2, 3), nan, 1, 2, 3, 4, 5), "b": f32(sh(3), 0, nan, 1), "c": f32(sh(2, 1), nan, 0)})
		Expect(math.IsNaN(float64(out["mx"].F32[0]))).To(BeTrue())
		Expect(math.IsNaN(float64(out["mx"].F32[1]))).To(BeTrue())
		Expect(out["mx"].F32[2]).To(Equal(float32(2)))
		Expect(math.IsNaN(float64(out["mn"].F32[1]))).To(BeTrue()) // 1 vs NaN from c
		Expect(out["mn"].F32[3:]).To(Equal([]float32{0, 0, 0}))
	})

	// Issue 15: native ops were never tested on large logits, where naive
	// formulas overflow (exp above 88.7, tanh as a ratio of exps above ~44,
	// softmax without the max subtracted).
	It("stays finite and exact where naive formulas overflow", func() {
		in := []float32{50, -50, 100, -200}
		out := run(prog, "unary", map[string]*tensor.Tensor{"a": f32(sh(4), in...)})
		Expect(out["t"].F32).To(Equal([]float32{1, -1, 1, -1}))
		for i, x := range in {
			v := float64(x)
			for name, want := range map[string]float64{"e": math.Exp(v), "s": 1 / (1 + math.Exp(-v))} {
				got := out[name].F32[i]
				w := float32(want)
				if math.IsInf(float64(w), 0) || w == 0 {
					Expect(got).To(Equal(w), "%s(%v)", name, x)
					continue
				}
				Expect(ulp(got, w)).To(BeNumerically("<=", 1), "%s(%v) = %v, want %v", name, x, got, w)
			}
		}
		Expect(math.IsInf(float64(out["e"].F32[2]), 1)).To(BeTrue(), "exp(100) overflows float32")

		big := run(prog, "axis", map[string]*tensor.Tensor{"a": f32(sh(2, 3), 1000, 0, -1000, -1e30, 0, 1e30)})
		Expect(big["sm"].F32).To(Equal([]float32{1, 0, 0, 0, 0, 1}))
		Expect(big["lsm"].F32).To(Equal([]float32{0, -1000, -2000, -2e30, -1e30, 0}))
		Expect(big["am"].I64).To(Equal([]int64{0, 2}))
		Expect(big["mx"].F32).To(Equal([]float32{1000, 0, 1e30}))
	})

	It("computes the unary functions within 1 ulp of the float64 closed form", func() {
		in := []float32{0.5, -1, 2, -0.25}
		out := run(prog, "unary", map[string]*tensor.Tensor{"a": f32(sh(4), in...)})
		for i, x := range in {
			v := float64(x)
			for name, want := range map[string]float64{
				"t": math.Tanh(v), "e": math.Exp(v), "l": math.Log(math.Abs(v)), "s": 1 / (1 + math.Exp(-v)),
				"r": math.Max(v, 0), "ab": math.Abs(v), "sq": math.Sqrt(math.Abs(v)),
			} {
				Expect(ulp(out[name].F32[i], float32(want))).To(BeNumerically("<=", 1), "%s(%v)", name, x)
			}
		}
	})

	It("keeps NaN in Relu and maps negatives and -0 to +0", func() {
		out := run(prog, "unary", map[string]*tensor.Tensor{"a": f32(sh(4), float32(math.NaN()), float32(math.Copysign(0, -1)), 3, float32(math.Inf(-1)))})
		r := out["r"].F32
		Expect(math.IsNaN(float64(r[0]))).To(BeTrue())
		Expect(math.Signbit(float64(r[1]))).To(BeFalse())
		Expect(r[1:]).To(Equal([]float32{0, 3, 0}))
	})

	It("multiplies and transposes matrices", func() {
		out := run(prog, "lin", map[string]*tensor.Tensor{"a": f32(sh(2, 3), 1, 2, 3, 4, 5, 6), "b": f32(sh(3, 2), 1, 2, 3, 4, 5, 6)})
		Expect(out["m"].F32).To(Equal([]float32{22, 28, 49, 64}))
		Expect(out["t"].F32).To(Equal([]float32{1, 4, 2, 5, 3, 6}))
		Expect(out["t"].Shape).To(Equal([]int{3, 2}))
	})

	It("reduces, normalises and takes argmax along an axis", func() {
		out := run(prog, "axis", map[string]*tensor.Tensor{"a": f32(sh(2, 3), 1, 2, 3, 4, 5, 6)})
		// softmax of (1,2,3) and of (4,5,6) are equal: exp(k-3)/sum.
		den := math.Exp(-2) + math.Exp(-1) + 1
		want := []float64{math.Exp(-2) / den, math.Exp(-1) / den, 1 / den}
		for i := range 6 {
			Expect(out["sm"].F32[i]).To(BeNumerically("~", want[i%3], 1e-7))
			Expect(out["lsm"].F32[i]).To(BeNumerically("~", math.Log(want[i%3]), 1e-6))
		}
		Expect(out["s0"].F32).To(Equal([]float32{5, 7, 9}))
		Expect(out["s1k"].F32).To(Equal([]float32{6, 15}))
		Expect(out["s1k"].Shape).To(Equal([]int{2, 1}))
		Expect(out["mean"].F32).To(Equal([]float32{2, 5}))
		Expect(out["mx"].F32).To(Equal([]float32{4, 5, 6}))
		Expect(out["am"].I64).To(Equal([]int64{2, 2}))
		Expect(out["am0"].I64).To(Equal([]int64{1, 1, 1}))
		Expect(out["centred"].F32).To(Equal([]float32{-1, 0, 1, -1, 0, 1}))
	})

	It("breaks Argmax ties by the first index and lets the first NaN win", func() {
		nan := float32(math.NaN())
		out := run(prog, "axis", map[string]*tensor.Tensor{"a": f32(sh(2, 3), 3, 3, 1, 1, nan, nan)})
		Expect(out["am"].I64).To(Equal([]int64{0, 1}))
		Expect(out["am0"].I64).To(Equal([]int64{0, 1, 1}))
	})

	DescribeTable("integer scalars wrap and follow control flow",
		func(n, d, q, r, w int64) {
			out := run(prog, "ints", map[string]*tensor.Tensor{"n": tensor.Scalar(n), "d": tensor.Scalar(d)})
			Expect(out["q"].I64).To(Equal([]int64{q}))
			Expect(out["r"].I64).To(Equal([]int64{r}))
			Expect(out["w"].I64).To(Equal([]int64{w}))
			Expect(out["w"].Shape).To(BeEmpty())
		},
		Entry("positive", int64(7), int64(2), int64(3), int64(1), int64(-22)),
		Entry("truncating toward zero", int64(-7), int64(2), int64(-3), int64(-1), int64(100)),
		Entry("zero quotient", int64(1), int64(5), int64(0), int64(1), int64(100)),
		Entry("even", int64(6), int64(2), int64(3), int64(0), int64(19)),
		Entry("MinInt64 % -1 is 0", int64(math.MinInt64+1), int64(-1), int64(math.MaxInt64), int64(0), wrapW(math.MinInt64+1, -1)),
		Entry("wrapping", int64(math.MaxInt64), int64(1), int64(math.MaxInt64), int64(0), wrapW(math.MaxInt64, 1)),
	)

	DescribeTable("checked arithmetic fails with the fallback's error",
		func(n, d int64, kind error) {
			in := map[string]*tensor.Tensor{"n": tensor.Scalar(n), "d": tensor.Scalar(d)}
			_, err := prog.Run(context.Background(), "ints", in)
			Expect(err).To(HaveOccurred())
			Expect(err).To(MatchError(kind))
			var re *ir.RuntimeError
			Expect(err).To(BeAssignableToTypeOf(re))
			_, fbErr := fallbackRun(irp, "ints", in)
			Expect(err.Error()).To(Equal(fbErr.Error()))
		},
		Entry("division by zero", int64(7), int64(0), ir.ErrDivisionByZero),
		Entry("MinInt64 / -1", int64(math.MinInt64), int64(-1), ir.ErrOverflow),
	)
})

// wrapW is ints' w = n*3 + d - 1 in Go's wrapping int64 arithmetic.
func wrapW(n, d int64) int64 { return n*3 + d - 1 }

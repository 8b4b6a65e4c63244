package oracle_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("numerics against independent values", func() {
	It("multiplies 2x3 by 3x2 as computed by hand", func() {
		// [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
		z := apply2(f32(2, 3), f32(3, 2), f32(2, 2),
			func(x, y program.Expr) program.Expr { return call(program.MatMul, x, y) },
			t32(sh(2, 3), 1, 2, 3, 4, 5, 6), t32(sh(3, 2), 7, 8, 9, 10, 11, 12))
		Expect(z.DType).To(Equal(tensor.Float64))
		Expect(z.Shape).To(Equal([]int{2, 2}))
		Expect(z.F64).To(Equal([]float64{58, 64, 139, 154}))
	})

	It("propagates NaN through MatMul even where the other factor is zero (IEEE, unlike gonum's zero skip)", func() {
		z := apply2(f32(1, 2), f32(2, 1), f32(1, 1),
			func(x, y program.Expr) program.Expr { return call(program.MatMul, x, y) },
			t32(sh(1, 2), 0, 1), t32(sh(2, 1), float32(math.Inf(1)), 2))
		Expect(math.IsNaN(z.F64[0])).To(BeTrue(), "0*Inf is NaN")
	})

	It("gives zeros for MatMul with an empty inner dimension and empty output for an empty batch", func() {
		z := apply2(f32("B", "K"), f32("K", 2), f32("B", 2),
			func(x, y program.Expr) program.Expr { return call(program.MatMul, x, y) },
			t32(sh(2, 0)), t32(sh(0, 2)))
		Expect(z.F64).To(Equal([]float64{0, 0, 0, 0}))
		z = apply2(f32("B", 3), f32(3, 2), f32("B", 2),
			func(x, y program.Expr) program.Expr { return call(program.MatMul, x, y) },
			t32(sh(0, 3)), t32(sh(3, 2), 1, 2, 3, 4, 5, 6))
		Expect(z.Shape).To(Equal([]int{0, 2}))
		Expect(z.F64).To(BeEmpty())
	})

	It("transposes", func() {
		y := apply(f32(2, 3), f32(3, 2), func(x program.Expr) program.Expr { return call(program.Transpose, x) },
			t32(sh(2, 3), 1, 2, 3, 4, 5, 6))
		Expect(y.Shape).To(Equal([]int{3, 2}))
		Expect(y.F64).To(Equal([]float64{1, 4, 2, 5, 3, 6}))
	})

	It("broadcasts [2][3] + [3] by rows", func() {
		z := apply2(f32(2, 3), f32(3), f32(2, 3),
			func(x, y program.Expr) program.Expr { return bin(program.Add, x, y) },
			t32(sh(2, 3), 1, 2, 3, 4, 5, 6), t32(sh(3), 10, 20, 30))
		Expect(z.F64).To(Equal([]float64{11, 22, 33, 14, 25, 36}))
	})

	It("broadcasts [2][1] * [1][3] to an outer product", func() {
		z := apply2(f32(2, 1), f32(1, 3), f32(2, 3),
			func(x, y program.Expr) program.Expr { return bin(program.Mul, x, y) },
			t32(sh(2, 1), 2, 3), t32(sh(1, 3), 1, 10, 100))
		Expect(z.Shape).To(Equal([]int{2, 3}))
		Expect(z.F64).To(Equal([]float64{2, 20, 200, 3, 30, 300}))
	})

	It("broadcasts a rank-0 literal, keeping it float64 (not rounded to float32)", func() {
		y := apply(f32(2), f32(2), func(x program.Expr) program.Expr { return bin(program.Mul, x, flit(0.1)) },
			t32(sh(2), 1, 2))
		Expect(y.F64).To(Equal([]float64{0.1, 0.2}))
		y = apply(f32(2), f32(2), func(x program.Expr) program.Expr { return bin(program.Sub, flit(1), x) },
			t32(sh(2), 1, 4))
		Expect(y.F64).To(Equal([]float64{0, -3}))
		y = apply(f32(2), f32(2), func(x program.Expr) program.Expr { return bin(program.Div, x, flit(4)) },
			t32(sh(2), 1, 2))
		Expect(y.F64).To(Equal([]float64{0.25, 0.5}))
	})

	It("negates float tensors", func() {
		y := apply(f32(2), f32(2), neg, t32(sh(2), 1, -2))
		Expect(y.F64).To(Equal([]float64{-1, 2}))
	})

	It("computes Sigmoid, Relu, Tanh, Exp, Log, Abs, Sqrt at known points", func() {
		in := t32(sh(3), 0, -2, 4)
		run := func(b program.Builtin) []float64 {
			return apply(f32(3), f32(3), func(x program.Expr) program.Expr { return call(b, x) }, in).F64
		}
		Expect(run(program.Sigmoid)[0]).To(Equal(0.5))
		Expect(run(program.Sigmoid)[2]).To(BeNumerically("~", 1/(1+math.Exp(-4)), 1e-15))
		Expect(run(program.Relu)).To(Equal([]float64{0, 0, 4}))
		Expect(run(program.Tanh)[0]).To(Equal(0.0))
		Expect(run(program.Exp)[0]).To(Equal(1.0))
		Expect(run(program.Abs)).To(Equal([]float64{0, 2, 4}))
		Expect(run(program.Sqrt)[2]).To(Equal(2.0))
		logs := run(program.Log)
		Expect(math.IsInf(logs[0], -1)).To(BeTrue())
		Expect(math.IsNaN(logs[1])).To(BeTrue())
		Expect(logs[2]).To(BeNumerically("~", 2*math.Ln2, 1e-15))
	})

	// Issue 15: an oracle that rounded to float32 anywhere passed every
	// other test. These values are not float32 values: a float32 rounding
	// of the result (or of an intermediate) misses them by far more than
	// the float64 tolerance used here.
	It("computes in float64: values no float32 rounding reaches", func() {
		in := t32(sh(4), 1, 2, 0.5, 3)
		run := func(b program.Builtin) []float64 {
			return apply(f32(4), f32(4), func(x program.Expr) program.Expr { return call(b, x) }, in).F64
		}
		exact := func(got, want float64) {
			GinkgoHelper()
			Expect(got).To(BeNumerically("~", want, 4e-16*math.Abs(want)))
			Expect(math.Abs(got-float64(float32(want)))).To(BeNumerically(">", 1e-9*math.Abs(want)), "rounded to float32")
		}
		exact(run(program.Exp)[0], math.E)
		exact(run(program.Exp)[1], math.Exp(2))
		exact(run(program.Log)[1], math.Ln2)
		exact(run(program.Log)[3], math.Log(3))
		exact(run(program.Tanh)[2], math.Tanh(0.5))
		exact(run(program.Sqrt)[1], math.Sqrt2)
		exact(run(program.Sigmoid)[0], 1/(1+math.Exp(-1)))
		// Softmax of [1 2 0.5 3]: e^x / sum e^x, by hand in float64.
		sm := apply(f32(1, 4), f32(1, 4), func(x program.Expr) program.Expr { return callAxis(program.Softmax, x, 1, false) },
			t32(sh(1, 4), 1, 2, 0.5, 3)).F64
		sum := math.Exp(1) + math.Exp(2) + math.Exp(0.5) + math.Exp(3)
		exact(sm[0], math.Exp(1)/sum)
		exact(sm[3], math.Exp(3)/sum)
		// 1/3 is not a float32: Mean of [0 1] / 3 and a float literal path.
		third := apply2(f32(1), f32(1), f32(1), func(x, y program.Expr) program.Expr { return bin(program.Div, x, y) },
			t32(sh(1), 1), t32(sh(1), 3)).F64
		exact(third[0], 1.0/3)
	})

	It("keeps NaN through Relu, Maximum and Minimum", func() {
		nan := float32(math.NaN())
		y := apply(f32(2), f32(2), func(x program.Expr) program.Expr { return call(program.Relu, x) }, t32(sh(2), nan, -1))
		Expect(math.IsNaN(y.F64[0])).To(BeTrue())
		Expect(y.F64[1]).To(Equal(0.0))
		inf := float32(math.Inf(1))
		for _, b := range []program.Builtin{program.Maximum, program.Minimum} {
			// NaN wins over ±Inf too (NumPy's maximum/minimum; Go's
			// math.Max(+Inf, NaN) is +Inf, math.Min(-Inf, NaN) is -Inf).
			z := apply2(f32(7), f32(7), f32(7),
				func(x, y program.Expr) program.Expr { return call(b, x, y) },
				t32(sh(7), nan, 1, 5, inf, nan, -inf, nan), t32(sh(7), 1, nan, 2, nan, inf, nan, -inf))
			for _, i := range []int{0, 1, 3, 4, 5, 6} {
				Expect(math.IsNaN(z.F64[i])).To(BeTrue(), "%s element %d: %v", b, i, z.F64)
			}
		}
	})

	It("broadcasts Maximum and Minimum", func() {
		z := apply2(f32(2, 2), f32(2), f32(2, 2),
			func(x, y program.Expr) program.Expr { return call(program.Maximum, x, y) },
			t32(sh(2, 2), 1, 5, 3, -1), t32(sh(2), 2, 2))
		Expect(z.F64).To(Equal([]float64{2, 5, 3, 2}))
		z = apply2(f32(2, 2), f32(2), f32(2, 2),
			func(x, y program.Expr) program.Expr { return call(program.Minimum, x, y) },
			t32(sh(2, 2), 1, 5, 3, -1), t32(sh(2), 2, 2))
		Expect(z.F64).To(Equal([]float64{1, 2, 2, -1}))
	})

	Describe("Softmax and LogSoftmax", func() {
		softmax := func(axis int) func(x program.Expr) program.Expr {
			return func(x program.Expr) program.Expr { return callAxis(program.Softmax, x, axis, false) }
		}

		It("is uniform for equal logits", func() {
			y := apply(f32(2, 4), f32(2, 4), softmax(1), t32(sh(2, 4), 3, 3, 3, 3, -7, -7, -7, -7))
			for _, p := range y.F64 {
				Expect(p).To(BeNumerically("~", 0.25, 1e-15))
			}
		})

		It("gives [1/4, 3/4] for [0, ln 3]", func() {
			y := apply(f32(2), f32(2), func(x program.Expr) program.Expr {
				return callAxis(program.Softmax, bin(program.Mul, x, flit(math.Log(3))), 0, false)
			}, t32(sh(2), 0, 1))
			Expect(y.F64[0]).To(BeNumerically("~", 0.25, 1e-15))
			Expect(y.F64[1]).To(BeNumerically("~", 0.75, 1e-15))
		})

		It("works along axis 0 (columns)", func() {
			y := apply(f32(2, 2), f32(2, 2), softmax(0), t32(sh(2, 2), 0, 5, 0, 5))
			Expect(y.F64).To(HaveEach(BeNumerically("~", 0.5, 1e-15)))
		})

		It("is stable for logits near +-1e4", func() {
			y := apply(f32(2, 3), f32(2, 3), softmax(1), t32(sh(2, 3), 1e4, 1e4-1, -1e4, -1e4, -1e4+2, 1e4))
			for r := range 2 {
				row := y.F64[r*3 : r*3+3]
				sum := 0.0
				for _, p := range row {
					Expect(math.IsNaN(p) || math.IsInf(p, 0)).To(BeFalse())
					sum += p
				}
				Expect(sum).To(BeNumerically("~", 1, 1e-12))
			}
			// Row 0: [1, e^-1, 0] / (1 + e^-1).
			Expect(y.F64[0]).To(BeNumerically("~", 1/(1+math.Exp(-1)), 1e-15))
			Expect(y.F64[2]).To(Equal(0.0))
			Expect(y.F64[5]).To(Equal(1.0))
		})

		It("matches the LogSoftmax closed form x - max - log(sum(exp(x - max)))", func() {
			y := apply(f32(3), f32(3), func(x program.Expr) program.Expr {
				return callAxis(program.LogSoftmax, x, 0, false)
			}, t32(sh(3), 1, 2, 3))
			lse := 3 + math.Log(math.Exp(-2)+math.Exp(-1)+1)
			for i, x := range []float64{1, 2, 3} {
				Expect(y.F64[i]).To(BeNumerically("~", x-lse, 1e-14))
			}
			y = apply(f32(2), f32(2), func(x program.Expr) program.Expr {
				return callAxis(program.LogSoftmax, x, 0, false)
			}, t32(sh(2), 1e4, -1e4))
			Expect(y.F64[0]).To(Equal(0.0))
			Expect(y.F64[1]).To(Equal(-2e4))
		})

		It("makes a lane with a NaN all NaN", func() {
			y := apply(f32(2, 2), f32(2, 2), softmax(1), t32(sh(2, 2), float32(math.NaN()), 1, 0, 0))
			Expect(math.IsNaN(y.F64[0]) && math.IsNaN(y.F64[1])).To(BeTrue())
			Expect(y.F64[2:]).To(Equal([]float64{0.5, 0.5}))
		})
	})

	Describe("reductions", func() {
		in := func() *tensor.Tensor { return t32(sh(2, 3), 1, 2, 3, 4, 5, 9) }
		red := func(b program.Builtin, axis int, keep bool) func(x program.Expr) program.Expr {
			return func(x program.Expr) program.Expr { return callAxis(b, x, axis, keep) }
		}

		It("computes Sum, Mean and Max without keepdims", func() {
			Expect(apply(f32(2, 3), f32(2), red(program.Sum, 1, false), in()).F64).To(Equal([]float64{6, 18}))
			Expect(apply(f32(2, 3), f32(3), red(program.Sum, 0, false), in()).F64).To(Equal([]float64{5, 7, 12}))
			Expect(apply(f32(2, 3), f32(2), red(program.Mean, 1, false), in()).F64).To(Equal([]float64{2, 6}))
			Expect(apply(f32(2, 3), f32(3), red(program.Max, 0, false), in()).F64).To(Equal([]float64{4, 5, 9}))
		})

		It("keeps the axis with size 1 under keepdims, so x - Mean(x, 1, true) broadcasts back", func() {
			y := apply(f32(2, 3), f32(2, 1), red(program.Sum, 1, true), in())
			Expect(y.Shape).To(Equal([]int{2, 1}))
			Expect(y.F64).To(Equal([]float64{6, 18}))
			y = apply(f32(2, 3), f32(1, 3), red(program.Max, 0, true), in())
			Expect(y.Shape).To(Equal([]int{1, 3}))
			Expect(y.F64).To(Equal([]float64{4, 5, 9}))
			y = apply(f32(2, 3), f32(2, 3), func(x program.Expr) program.Expr {
				return bin(program.Sub, x, callAxis(program.Mean, x, 1, true))
			}, in())
			Expect(y.F64).To(Equal([]float64{-1, 0, 1, -2, -1, 3}))
		})

		It("reduces a rank-1 tensor to a scalar", func() {
			y := apply(f32(3), f32(), red(program.Mean, 0, false), t32(sh(3), 1, 2, 6))
			Expect(y.Shape).To(BeEmpty())
			Expect(y.F64).To(Equal([]float64{3}))
		})

		It("propagates NaN in Max even when it is not first", func() {
			y := apply(f32(3), f32(), red(program.Max, 0, false), t32(sh(3), 1, float32(math.NaN()), 5))
			Expect(math.IsNaN(y.F64[0])).To(BeTrue())
		})

		It("reduces an empty axis to Sum 0, Mean NaN, Max -Inf", func() {
			x := t32(sh(2, 0))
			Expect(apply(f32(2, "K"), f32(2), red(program.Sum, 1, false), x).F64).To(Equal([]float64{0, 0}))
			Expect(apply(f32(2, "K"), f32(2), red(program.Mean, 1, false), x).F64).To(HaveEach(Satisfy(math.IsNaN)))
			Expect(apply(f32(2, "K"), f32(2), red(program.Max, 1, false), x).F64).To(HaveEach(Equal(math.Inf(-1))))
		})
	})

	Describe("Argmax", func() {
		argmax := func(axis int) func(x program.Expr) program.Expr {
			return func(x program.Expr) program.Expr { return callAxis(program.Argmax, x, axis, false) }
		}

		It("returns int64 classes, the first index on ties", func() {
			y := apply(f32(3, 4), i64(3), argmax(1), t32(sh(3, 4), 1, 7, 7, 2, 5, 5, 5, 5, -1, -3, -1, -2))
			Expect(y.DType).To(Equal(tensor.Int64))
			Expect(y.Shape).To(Equal([]int{3}))
			Expect(y.I64).To(Equal([]int64{1, 0, 0}))
		})

		It("returns the first NaN's index when a lane holds NaN, as NumPy", func() {
			nan := float32(math.NaN())
			y := apply(f32(3, 4), i64(3), argmax(1), t32(sh(3, 4), 9, 1, nan, nan, nan, 9, 1, 1, 1, 2, 3, nan))
			Expect(y.I64).To(Equal([]int64{2, 0, 3}))
		})

		It("works along axis 0", func() {
			y := apply(f32(2, 3), i64(3), argmax(0), t32(sh(2, 3), 1, 5, 3, 4, 5, 2))
			Expect(y.I64).To(Equal([]int64{1, 0, 0}))
		})

		It("treats -Inf lanes as ties", func() {
			inf := float32(math.Inf(-1))
			y := apply(f32(3), i64(), argmax(0), t32(sh(3), inf, inf, inf))
			Expect(y.Shape).To(BeEmpty())
			Expect(y.I64).To(Equal([]int64{0}))
		})
	})

	It("handles rank 4 broadcasting with an odometer", func() {
		// [2][1][2][1] + [3][1][2] -> [2][3][2][2]; element [a][b][c][d] = x[a][0][c][0] + y[b][0][d].
		xd := []float32{1, 2, 3, 4}             // x[a][0][c][0] = 1 + 2a + c
		yd := []float32{10, 20, 30, 40, 50, 60} // y[b][0][d] = 10 + 20b + 10d
		z := apply2(f32(2, 1, 2, 1), f32(3, 1, 2), f32(2, 3, 2, 2),
			func(x, y program.Expr) program.Expr { return bin(program.Add, x, y) },
			t32(sh(2, 1, 2, 1), xd...), t32(sh(3, 1, 2), yd...))
		Expect(z.Shape).To(Equal([]int{2, 3, 2, 2}))
		i := 0
		for a := range 2 {
			for b := range 3 {
				for c := range 2 {
					for d := range 2 {
						want := float64(1+2*a+c) + float64(10+20*b+10*d)
						Expect(z.F64[i]).To(Equal(want), "at [%d %d %d %d]", a, b, c, d)
						i++
					}
				}
			}
		}
	})
})

var _ = Describe("Max of a lane of signed zeros", func() {
	It("is +0 wherever the +0 stands, as Maximum, the fallback and native give", func() {
		negz := float32(math.Copysign(0, -1))
		y := apply(f32(2, 2), f32(2), func(x program.Expr) program.Expr { return callAxis(program.Max, x, 1, false) },
			t32(sh(2, 2), negz, 0, 0, negz))
		Expect(y.F64).To(Equal([]float64{0, 0}))
		Expect(math.Signbit(y.F64[0])).To(BeFalse())
		Expect(math.Signbit(y.F64[1])).To(BeFalse())
	})
})

package fallback_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("float32 numerics", func() {
	Describe("MatMul and Transpose", func() {
		It("multiplies a 2x3 by a 3x2 matrix (hand-computed)", func() {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, 2, 3)
			w := b.Param("w", ir.Float32, 3, 2)
			y := b.Result("y", ir.Float32, 2, 2)
			b.Op(ir.MatMul, y, x, w)
			out, err := run(b.Fn, inputs{
				"x": f32([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
				"w": f32([]float32{7, 8, 9, 10, 11, 12}, 3, 2),
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].DType).To(Equal(tensor.Float32))
			Expect(out["y"].Shape).To(Equal([]int{2, 2}))
			// [1 2 3]·[7 9 11] = 58, ·[8 10 12] = 64; [4 5 6]· = 139, 154.
			Expect(out["y"].F32).To(Equal([]float32{58, 64, 139, 154}))
		})

		It("adds the products in increasing k order, in float32", func() {
			// 1e8 + 1 - 1e8 in float32 is 0 in this order (1e8+1 rounds to 1e8),
			// where another order or float64 accumulation would give 1.
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, 1, 3)
			w := b.Param("w", ir.Float32, 3, 1)
			y := b.Result("y", ir.Float32, 1, 1)
			b.Op(ir.MatMul, y, x, w)
			out, err := run(b.Fn, inputs{"x": f32([]float32{1e8, 1, -1e8}, 1, 3), "w": f32([]float32{1, 1, 1}, 3, 1)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].F32).To(Equal([]float32{0}))
		})

		It("transposes a 2x3 matrix", func() {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, 2, 3)
			y := b.Result("y", ir.Float32, 3, 2)
			b.Op(ir.Transpose, y, x)
			out, err := run(b.Fn, inputs{"x": f32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].Shape).To(Equal([]int{3, 2}))
			Expect(out["y"].F32).To(Equal([]float32{1, 4, 2, 5, 3, 6}))
		})
	})

	Describe("broadcasting", func() {
		It("adds a row-vector bias to every row", func() {
			out, err := run(binaryFn(ir.Add, []any{"B", 3}, []any{3}, []any{"B", 3}), inputs{
				"x": f32([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
				"y": f32([]float32{10, 20, 30}, 3),
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["z"].Shape).To(Equal([]int{2, 3}))
			Expect(out["z"].F32).To(Equal([]float32{11, 22, 33, 14, 25, 36}))
		})

		It("broadcasts a row vector on the left too", func() {
			out, err := run(binaryFn(ir.Sub, []any{3}, []any{2, 3}, []any{2, 3}), inputs{
				"x": f32([]float32{10, 20, 30}, 3),
				"y": f32([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["z"].F32).To(Equal([]float32{9, 18, 27, 6, 15, 24}))
		})

		It("forms an outer product from [2][1] * [1][3]", func() {
			out, err := run(binaryFn(ir.Mul, []any{2, 1}, []any{1, 3}, []any{2, 3}), inputs{
				"x": f32([]float32{2, 3}, 2, 1),
				"y": f32([]float32{1, 10, 100}, 1, 3),
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["z"].F32).To(Equal([]float32{2, 20, 200, 3, 30, 300}))
		})

		It("broadcasts [2][1][3] with [4][1] to [2][4][3]", func() {
			xs := []float32{1, 2, 3, 4, 5, 6}
			ys := []float32{100, 200, 300, 400}
			out, err := run(binaryFn(ir.Add, []any{2, 1, 3}, []any{4, 1}, []any{2, 4, 3}), inputs{
				"x": f32(xs, 2, 1, 3), "y": f32(ys, 4, 1),
			})
			Expect(err).NotTo(HaveOccurred())
			want := []float32{}
			for i := range 2 {
				for j := range 4 {
					for k := range 3 {
						want = append(want, xs[i*3+k]+ys[j])
					}
				}
			}
			Expect(out["z"].F32).To(Equal(want))
		})

		It("broadcasts a rank-0 constant on either side, rounded to float32 once", func() {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, 3)
			y := b.Result("y", ir.Float32, 3)
			z := b.Result("z", ir.Float32, 3)
			c := b.ConstF(0.1)
			b.Op(ir.Mul, y, x, c)
			two := b.ConstF(2)
			b.Op(ir.Div, z, two, x)
			out, err := run(b.Fn, inputs{"x": f32([]float32{1, 2, 4}, 3)})
			Expect(err).NotTo(HaveOccurred())
			tenth := float32(0.1) // the float64 literal rounded to float32 once
			Expect(out["y"].F32).To(Equal([]float32{tenth, 2 * tenth, 4 * tenth}))
			Expect(out["z"].F32).To(Equal([]float32{2, 1, 0.5}))
		})

		It("divides by zero to ±Inf and NaN", func() {
			out, err := run(binaryFn(ir.Div, []any{3}, []any{}, []any{3}), inputs{
				"x": f32([]float32{1, -1, 0}, 3), "y": f32([]float32{0}),
			})
			Expect(err).NotTo(HaveOccurred())
			z := out["z"].F32
			Expect(math.IsInf(float64(z[0]), 1)).To(BeTrue())
			Expect(math.IsInf(float64(z[1]), -1)).To(BeTrue())
			Expect(math.IsNaN(float64(z[2]))).To(BeTrue())
		})

		DescribeTable("Maximum and Minimum propagate NaN like NumPy",
			func(k ir.OpKind, want []float32) {
				nan := nan32()
				out, err := run(binaryFn(k, []any{4}, []any{4}, []any{4}), inputs{
					"x": f32([]float32{1, nan, 3, -2}, 4), "y": f32([]float32{2, 5, nan, -7}, 4),
				})
				Expect(err).NotTo(HaveOccurred())
				z := out["z"].F32
				Expect(z[0]).To(Equal(want[0]))
				Expect(math.IsNaN(float64(z[1]))).To(BeTrue())
				Expect(math.IsNaN(float64(z[2]))).To(BeTrue())
				Expect(z[3]).To(Equal(want[3]))
			},
			Entry("Maximum", ir.Maximum, []float32{2, 0, 0, -2}),
			Entry("Minimum", ir.Minimum, []float32{1, 0, 0, -7}),
		)

		// Issue 15: x >= y returned the first operand for (-0, +0).
		DescribeTable("Maximum and Minimum of two zeros follow math.Max and math.Min, whichever comes first",
			func(k ir.OpKind, wantNeg []bool) {
				negz := float32(math.Copysign(0, -1))
				out, err := run(binaryFn(k, []any{2}, []any{2}, []any{2}), inputs{
					"x": f32([]float32{negz, 0}, 2), "y": f32([]float32{0, negz}, 2),
				})
				Expect(err).NotTo(HaveOccurred())
				for i, neg := range wantNeg {
					Expect(out["z"].F32[i]).To(BeZero())
					Expect(math.Signbit(float64(out["z"].F32[i]))).To(Equal(neg), "element %d", i)
				}
			},
			Entry("Maximum(-0, +0) and Maximum(+0, -0) are +0", ir.Maximum, []bool{false, false}),
			Entry("Minimum(-0, +0) and Minimum(+0, -0) are -0", ir.Minimum, []bool{true, true}),
		)
	})

	Describe("unary ops against closed forms", func() {
		ln2, ln3 := math.Ln2, math.Log(3)
		DescribeTable("values",
			func(k ir.OpKind, in []float32, want []float64) {
				out, err := run(unaryFn(k, len(in)), inputs{"x": f32(in, len(in))})
				Expect(err).NotTo(HaveOccurred())
				for i, w := range want {
					got := float64(out["y"].F32[i])
					switch {
					case math.IsNaN(w):
						Expect(math.IsNaN(got)).To(BeTrue(), "element %d: %v", i, got)
					case math.IsInf(w, 0):
						Expect(got).To(Equal(w), "element %d", i)
					default:
						Expect(got).To(BeNumerically("~", w, 1e-7+1e-6*math.Abs(w)), "element %d", i)
					}
				}
			},
			Entry("Tanh", ir.Tanh, []float32{0, float32(ln2), -float32(ln2), 20},
				[]float64{0, 0.6, -0.6, 1}), // tanh(ln 2) = (4-1)/(4+1)
			Entry("Exp", ir.Exp, []float32{0, 1, float32(ln2), -1000},
				[]float64{1, math.E, 2, 0}),
			Entry("Log", ir.Log, []float32{1, float32(math.E), 0, -1},
				[]float64{0, 1, math.Inf(-1), math.NaN()}),
			Entry("Sigmoid", ir.Sigmoid, []float32{0, float32(ln3), -float32(ln3), 1000, -1000},
				[]float64{0.5, 0.75, 0.25, 1, 0}), // 1/(1+1/3) = 3/4
			Entry("Relu", ir.Relu, []float32{-3, 0, 2.5, nan32(), float32(math.Inf(-1))},
				[]float64{0, 0, 2.5, math.NaN(), 0}),
			Entry("Abs", ir.Abs, []float32{-3, 2, float32(math.Inf(-1)), nan32()},
				[]float64{3, 2, math.Inf(1), math.NaN()}),
			Entry("Sqrt", ir.Sqrt, []float32{4, 2, 0, -1},
				[]float64{2, math.Sqrt2, 0, math.NaN()}),
			Entry("Neg", ir.Neg, []float32{1.5, -2, float32(math.Inf(1))},
				[]float64{-1.5, 2, math.Inf(-1)}),
		)

		It("rounds transcendentals to the nearest float32", func() {
			out, err := run(unaryFn(ir.Exp, 1), inputs{"x": f32([]float32{1}, 1)})
			Expect(err).NotTo(HaveOccurred())
			// e = 2.718281828459045...; the float32 neighbours are 2.7182817 and 2.718282.
			Expect(out["y"].F32[0]).To(Equal(float32(2.7182817)))
		})

		It("gives Abs(-0) = +0 and Relu(-0) = +0", func() {
			negZero := float32(math.Copysign(0, -1))
			for _, k := range []ir.OpKind{ir.Abs, ir.Relu} {
				out, err := run(unaryFn(k, 1), inputs{"x": f32([]float32{negZero}, 1)})
				Expect(err).NotTo(HaveOccurred())
				Expect(math.Signbit(float64(out["y"].F32[0]))).To(BeFalse(), "%s", k)
			}
		})
	})

	Describe("Softmax and LogSoftmax", func() {
		softmaxFn := func(k ir.OpKind, axis int, shape ...any) *ir.Func {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, shape...)
			y := b.Result("y", ir.Float32, shape...)
			b.Op(k, y, x).Axis = axis
			return b.Fn
		}

		It("maps [0, ln 3] to [1/4, 3/4]", func() {
			out, err := run(softmaxFn(ir.Softmax, 1, 1, 2), inputs{"x": f32([]float32{0, float32(math.Log(3))}, 1, 2)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].F32[0]).To(BeNumerically("~", 0.25, 1e-7))
			Expect(out["y"].F32[1]).To(BeNumerically("~", 0.75, 1e-7))
		})

		It("is uniform on equal logits", func() {
			out, err := run(softmaxFn(ir.Softmax, 1, 2, 4), inputs{"x": f32([]float32{3, 3, 3, 3, -7, -7, -7, -7}, 2, 4)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].F32).To(Equal([]float32{0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25}))
		})

		It("is stable for logits near ±1e4", func() {
			ln3 := float32(math.Log(3))
			out, err := run(softmaxFn(ir.Softmax, 1, 3, 2), inputs{"x": f32([]float32{
				1e4, 1e4, -1e4, -1e4 + 2*ln3, 1e4, -1e4,
			}, 3, 2)})
			Expect(err).NotTo(HaveOccurred())
			y := out["y"].F32
			for _, v := range y {
				Expect(math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)).To(BeFalse())
			}
			Expect(y[0:2]).To(Equal([]float32{0.5, 0.5}))
			// exp(2 ln 3) = 9 (the float32 sum -1e4 + 2 ln 3 rounds to within 1e-3).
			Expect(y[2]).To(BeNumerically("~", 0.1, 1e-4))
			Expect(y[3]).To(BeNumerically("~", 0.9, 1e-4))
			Expect(y[4:6]).To(Equal([]float32{1, 0}))
		})

		It("works along axis 0", func() {
			out, err := run(softmaxFn(ir.Softmax, 0, 2, 2), inputs{"x": f32([]float32{0, 5, float32(math.Log(3)), 5}, 2, 2)})
			Expect(err).NotTo(HaveOccurred())
			y := out["y"].F32
			Expect(y[0]).To(BeNumerically("~", 0.25, 1e-7))
			Expect(y[2]).To(BeNumerically("~", 0.75, 1e-7))
			Expect(y[1]).To(Equal(float32(0.5)))
			Expect(y[3]).To(Equal(float32(0.5)))
		})

		It("gives LogSoftmax [0, ln 3] = [ln 1/4, ln 3/4], stably at 1e4", func() {
			ln3 := float32(math.Log(3))
			out, err := run(softmaxFn(ir.LogSoftmax, 1, 2, 2), inputs{"x": f32([]float32{0, ln3, 1e4, 1e4}, 2, 2)})
			Expect(err).NotTo(HaveOccurred())
			y := out["y"].F32
			Expect(y[0]).To(BeNumerically("~", math.Log(0.25), 1e-6))
			Expect(y[1]).To(BeNumerically("~", math.Log(0.75), 1e-6))
			Expect(y[2]).To(BeNumerically("~", -math.Ln2, 1e-6))
			Expect(y[3]).To(BeNumerically("~", -math.Ln2, 1e-6))
		})
	})

	Describe("reductions", func() {
		reduceFn := func(k ir.OpKind, axis int, keep bool, in, out []any) *ir.Func {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, in...)
			y := b.Result("y", ir.Float32, out...)
			o := b.Op(k, y, x)
			o.Axis, o.KeepDims = axis, keep
			return b.Fn
		}
		x23 := func() inputs { return inputs{"x": f32([]float32{1, 2, 6, -4, 5, 0}, 2, 3)} }

		DescribeTable("Sum, Mean and Max along an axis",
			func(k ir.OpKind, axis int, keep bool, outShape []any, wantShape []int, want []float32) {
				out, err := run(reduceFn(k, axis, keep, []any{2, 3}, outShape), x23())
				Expect(err).NotTo(HaveOccurred())
				Expect(out["y"].Shape).To(Equal(wantShape))
				Expect(out["y"].F32).To(Equal(want))
			},
			Entry("Sum axis 1", ir.Sum, 1, false, []any{2}, []int{2}, []float32{9, 1}),
			Entry("Sum axis 1 keepdims", ir.Sum, 1, true, []any{2, 1}, []int{2, 1}, []float32{9, 1}),
			Entry("Sum axis 0", ir.Sum, 0, false, []any{3}, []int{3}, []float32{-3, 7, 6}),
			Entry("Mean axis 1", ir.Mean, 1, false, []any{2}, []int{2}, []float32{3, float32(1.0) / 3}),
			Entry("Mean axis 0 keepdims", ir.Mean, 0, true, []any{1, 3}, []int{1, 3}, []float32{-1.5, 3.5, 3}),
			Entry("Max axis 1", ir.Max, 1, false, []any{2}, []int{2}, []float32{6, 5}),
			Entry("Max axis 0 keepdims", ir.Max, 0, true, []any{1, 3}, []int{1, 3}, []float32{1, 5, 6}),
		)

		It("lets a kept axis broadcast back: x - Mean(x, 1, true)", func() {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, "B", 3)
			y := b.Result("y", ir.Float32, "B", 3)
			m := b.Temp(ir.Float32, "B", 1)
			o := b.Op(ir.Mean, m, x)
			o.Axis, o.KeepDims = 1, true
			b.Op(ir.Sub, y, x, m)
			out, err := run(b.Fn, x23())
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].F32).To(Equal([]float32{-2, -1, 3, -4.0 - float32(1.0)/3, 5 - float32(1.0)/3, -float32(1.0) / 3}))
		})

		It("propagates NaN through Max", func() {
			out, err := run(reduceFn(ir.Max, 1, false, []any{2, 3}, []any{2}), inputs{"x": f32([]float32{1, nan32(), 9, 1, 2, 3}, 2, 3)})
			Expect(err).NotTo(HaveOccurred())
			Expect(math.IsNaN(float64(out["y"].F32[0]))).To(BeTrue())
			Expect(out["y"].F32[1]).To(Equal(float32(3)))
		})

		It("reduces an empty axis to Sum 0, Mean NaN, Max -Inf", func() {
			for k, check := range map[ir.OpKind]func(float64) bool{
				ir.Sum:  func(v float64) bool { return v == 0 },
				ir.Mean: math.IsNaN,
				ir.Max:  func(v float64) bool { return math.IsInf(v, -1) },
			} {
				out, err := run(reduceFn(k, 0, false, []any{"B", 2}, []any{2}), inputs{"x": f32([]float32{}, 0, 2)})
				Expect(err).NotTo(HaveOccurred())
				Expect(out["y"].F32).To(HaveLen(2))
				Expect(check(float64(out["y"].F32[0]))).To(BeTrue(), "%s: %v", k, out["y"].F32)
			}
		})
	})

	Describe("Argmax", func() {
		argmaxFn := func(axis int, in, out []any) *ir.Func {
			b := irtest.NewFunc("f")
			x := b.Param("x", ir.Float32, in...)
			y := b.Result("y", ir.Int64, out...)
			b.Op(ir.Argmax, y, x).Axis = axis
			return b.Fn
		}
		nan := nan32()

		It("returns the first index of a tie and of the first NaN, as an int64 tensor", func() {
			out, err := run(argmaxFn(1, []any{"B", 4}, []any{"B"}), inputs{"x": f32([]float32{
				1, 3, 3, 2, // tie: first index
				1, nan, 5, nan, // first NaN
				nan, 9, 9, 9, // NaN first
				-1, -1, -1, -1, // all equal
				0, 0, 0, 7,
			}, 5, 4)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].DType).To(Equal(tensor.Int64))
			Expect(out["y"].Shape).To(Equal([]int{5}))
			Expect(out["y"].I64).To(Equal([]int64{1, 1, 0, 0, 3}))
		})

		It("works along axis 0", func() {
			out, err := run(argmaxFn(0, []any{3, 2}, []any{2}), inputs{"x": f32([]float32{1, 5, 4, 5, 4, 0}, 3, 2)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].I64).To(Equal([]int64{1, 0}))
		})

		It("returns a rank-0 int64 for a vector", func() {
			out, err := run(argmaxFn(0, []any{3}, []any{}), inputs{"x": f32([]float32{1, 5, 2}, 3)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].Shape).To(BeEmpty())
			Expect(out["y"].I64).To(Equal([]int64{1}))
		})
	})

	Describe("integer scalar ops", func() {
		DescribeTable("wrap and divide like Go",
			func(k ir.OpKind, arity int, a, c, want int64) {
				out, err := run(intFn(k, arity), inputs{"a": tensor.Scalar(a), "c": tensor.Scalar(c)})
				Expect(err).NotTo(HaveOccurred())
				Expect(out["r"].DType).To(Equal(tensor.Int64))
				Expect(out["r"].Shape).To(BeEmpty())
				Expect(out["r"].I64).To(Equal([]int64{want}))
			},
			Entry("IAdd wraps", ir.IAdd, 2, int64(math.MaxInt64), int64(1), int64(math.MinInt64)),
			Entry("ISub wraps", ir.ISub, 2, int64(math.MinInt64), int64(1), int64(math.MaxInt64)),
			Entry("IMul wraps", ir.IMul, 2, int64(1)<<62, int64(4), int64(0)),
			Entry("INeg of MinInt64", ir.INeg, 1, int64(math.MinInt64), int64(0), int64(math.MinInt64)),
			Entry("CheckedDiv truncates", ir.CheckedDiv, 2, int64(-7), int64(2), int64(-3)),
			Entry("CheckedRem has the dividend's sign", ir.CheckedRem, 2, int64(-7), int64(2), int64(-1)),
			Entry("CheckedRem MinInt64 % -1 is 0", ir.CheckedRem, 2, int64(math.MinInt64), int64(-1), int64(0)),
			Entry("CheckedDiv MinInt64 / 1", ir.CheckedDiv, 2, int64(math.MinInt64), int64(1), int64(math.MinInt64)),
		)

		DescribeTable("comparisons and Not choose the branch",
			func(k ir.OpKind, negate bool, a, c int64, want bool) {
				b := irtest.NewFunc("f")
				pa := b.Param("a", ir.Int64)
				pc := b.Param("c", ir.Int64)
				r := b.Result("r", ir.Int64)
				cond := b.Temp(ir.Bool)
				b.Op(k, cond, pa, pc)
				if negate {
					n := b.Temp(ir.Bool)
					b.Op(ir.Not, n, cond)
					cond = n
				}
				b.Cond(cond, func() { b.Op(ir.ConstI, r).I = 1 }, func() { b.Op(ir.ConstI, r).I = 2 })
				out, err := run(b.Fn, inputs{"a": tensor.Scalar(a), "c": tensor.Scalar(c)})
				Expect(err).NotTo(HaveOccurred())
				Expect(out["r"].I64[0] == 1).To(Equal(want))
			},
			Entry("Eq", ir.Eq, false, int64(3), int64(3), true),
			Entry("Ne", ir.Ne, false, int64(3), int64(3), false),
			Entry("Lt", ir.Lt, false, int64(-1), int64(0), true),
			Entry("Le", ir.Le, false, int64(0), int64(0), true),
			Entry("Gt", ir.Gt, false, int64(0), int64(0), false),
			Entry("Ge", ir.Ge, false, int64(math.MinInt64), int64(math.MaxInt64), false),
			Entry("Not Eq", ir.Eq, true, int64(3), int64(4), true),
		)
	})
})

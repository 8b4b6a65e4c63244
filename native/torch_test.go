//go:build cgo

package native_test

import (
	"context"
	"math"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// requireTorchEnv, when set (ci/test.sh sets it), makes a spec that needs
// libtorch fail when libtorch is missing instead of skipping.
const requireTorchEnv = "RXEQ_REQUIRE_TORCH"

// needTorch skips the spec, saying why, when libtorch is genuinely absent;
// under RXEQ_REQUIRE_TORCH=1 (CI) its absence fails the spec instead.
func needTorch() {
	GinkgoHelper()
	if _, err := runtime.FindTorch(""); err != nil {
		if os.Getenv(requireTorchEnv) != "" {
			Fail("libtorch is required here (" + requireTorchEnv + " is set) but: " + err.Error())
		}
		Skip("the torch runtime needs libtorch, which this machine lacks: " + err.Error())
	}
}

// compileTorch builds p against the torch runtime through the suite cache.
func compileTorch(p *ir.Program) *native.Program {
	GinkgoHelper()
	needTorch()
	prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, Runtime: executor.Torch})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(prog.Close)
	return prog
}

// runTorch runs fn on the torch runtime and expects success.
func runTorch(prog *native.Program, fn string, in map[string]*tensor.Tensor) map[string]*tensor.Tensor {
	GinkgoHelper()
	r, err := prog.Run(context.Background(), fn, in)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Path).To(Equal(executor.Torch))
	return r.Outputs
}

// agreeWithOracle runs fn of f on the oracle and compares every output of
// got with it: int64 exactly, float32 within atol + rtol·|want| (the
// catalog's tolerance), NaN at the same index and infinities exactly.
func agreeWithOracle(f *program.File, fn string, in map[string]*tensor.Tensor, got map[string]*tensor.Tensor) {
	GinkgoHelper()
	want, err := oracle.Run(context.Background(), f.Func(fn), in)
	Expect(err).NotTo(HaveOccurred())
	Expect(got).To(HaveLen(len(want)))
	for name, w := range want {
		g := got[name]
		Expect(g).NotTo(BeNil(), name)
		Expect(g.Shape).To(Equal(w.Shape), name)
		if w.DType == tensor.Int64 {
			Expect(g.I64).To(Equal(w.I64), name)
			continue
		}
		for i, wv := range w.F64 {
			gv := float64(g.F32[i])
			switch {
			case math.IsNaN(wv):
				Expect(math.IsNaN(gv)).To(BeTrue(), "%s[%d]: want NaN, got %v", name, i, gv)
			case math.IsInf(wv, 0):
				Expect(gv).To(Equal(wv), "%s[%d]", name, i)
			default:
				Expect(math.Abs(gv-wv)).To(BeNumerically("<=", 3e-6+1e-4*math.Abs(wv)), "%s[%d]: want %v got %v", name, i, wv, gv)
			}
		}
	}
}

var negZero = float32(math.Copysign(0, -1))

var _ = Describe("the torch runtime", Label("native", "torch"), func() {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))

	It("runs the same generated C as the native runtime, with Path torch", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		tp := compileTorch(p)
		np := compile(p)
		Expect(tp.Source()).To(Equal(np.Source()))
		Expect(tp.Info().Framework).To(ContainSubstring("libtorch 1."))
		Expect(tp.Info().Runtime).NotTo(Equal(np.Info().Runtime))
		path, err := tp.PathOf("score_linear")
		Expect(err).NotTo(HaveOccurred())
		Expect(path).To(Equal(executor.Torch))
	})

	Describe("ops against the oracle", Ordered, func() {
		var opsF, edgesF *program.File
		var ops, edges *native.Program
		var edgesIR *ir.Program

		BeforeAll(func() {
			var p *ir.Program
			opsF, p = parse("ops.rx", readTestdata("ops.rx"))
			ops = compileTorch(p)
			edgesF, edgesIR = parse("edges.rx", readTestdata("edges.rx"))
			edges = compileTorch(edgesIR)
		})

		It("computes broadcasting arithmetic exactly where float32 is exact", func() {
			in := map[string]*tensor.Tensor{"a": f32(sh(2, 3), 1, -2, 3, -4, 5, -6), "b": f32(sh(3), 10, 20, -30), "c": f32(sh(2, 1), 2, 0.5)}
			out := runTorch(ops, "elem", in)
			Expect(out["add"].F32).To(Equal([]float32{11, 18, -27, 6, 25, -36}))
			Expect(out["sub"].F32).To(Equal([]float32{-1, -4, 1, -4.5, 4.5, -6.5}))
			Expect(out["mul"].F32).To(Equal([]float32{10, -40, -90, -40, 100, 180}))
			Expect(out["div"].F32).To(Equal([]float32{1.0 / 10, -2.0 / 20, 3.0 / -30, -4.0 / 10, 5.0 / 20, -6.0 / -30}))
			Expect(out["neg"].F32).To(Equal([]float32{-1, 2, -3, 4, -5, 6}))
			Expect(out["mx"].F32).To(Equal([]float32{10, 20, 3, 10, 20, -6}))
			Expect(out["mn"].F32).To(Equal([]float32{1, -2, 2, -4, 0.5, -6}))
			Expect(out["lit"].F32).To(Equal([]float32{1.5, -6, 6.5, -11, 11.5, -16}))
			agreeWithOracle(opsF, "elem", in, out)
		})

		It("computes the unary functions within 1 ulp of the float64 closed form", func() {
			in := []float32{0.5, -1, 2, -0.25}
			out := runTorch(ops, "unary", map[string]*tensor.Tensor{"a": f32(sh(4), in...)})
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

		It("keeps NaN and ±Inf through the unary functions", func() {
			in := map[string]*tensor.Tensor{"a": f32(sh(4), nan, inf, -inf, 0)}
			out := runTorch(ops, "unary", in)
			agreeWithOracle(opsF, "unary", in, out)
			Expect(math.IsNaN(float64(out["r"].F32[0]))).To(BeTrue())
			Expect(out["r"].F32[1:]).To(Equal([]float32{inf, 0, 0}))
			Expect(out["t"].F32[1:3]).To(Equal([]float32{1, -1}))
			Expect(out["s"].F32[1:3]).To(Equal([]float32{1, 0}))
		})

		It("multiplies and transposes matrices", func() {
			in := map[string]*tensor.Tensor{"a": f32(sh(2, 3), 1, 2, 3, 4, 5, 6), "b": f32(sh(3, 2), 1, 2, 3, 4, 5, 6)}
			out := runTorch(ops, "lin", in)
			Expect(out["m"].F32).To(Equal([]float32{22, 28, 49, 64}))
			Expect(out["t"].F32).To(Equal([]float32{1, 4, 2, 5, 3, 6}))
			Expect(out["t"].Shape).To(Equal([]int{3, 2}))
			agreeWithOracle(opsF, "lin", in, out)
		})

		It("reduces, normalises and takes argmax along an axis", func() {
			in := map[string]*tensor.Tensor{"a": f32(sh(2, 3), 1, 2, 3, 4, 5, 6)}
			out := runTorch(ops, "axis", in)
			Expect(out["s0"].F32).To(Equal([]float32{5, 7, 9}))
			Expect(out["s1k"].F32).To(Equal([]float32{6, 15}))
			Expect(out["s1k"].Shape).To(Equal([]int{2, 1}))
			Expect(out["mean"].F32).To(Equal([]float32{2, 5}))
			Expect(out["mx"].F32).To(Equal([]float32{4, 5, 6}))
			Expect(out["am"].I64).To(Equal([]int64{2, 2}))
			Expect(out["am0"].I64).To(Equal([]int64{1, 1, 1}))
			Expect(out["centred"].F32).To(Equal([]float32{-1, 0, 1, -1, 0, 1}))
			agreeWithOracle(opsF, "axis", in, out)
		})

		It("breaks Argmax ties by the first index and lets the first NaN win", func() {
			in := map[string]*tensor.Tensor{"a": f32(sh(2, 3), 3, 3, 1, 1, nan, nan)}
			out := runTorch(ops, "axis", in)
			Expect(out["am"].I64).To(Equal([]int64{0, 1}))
			Expect(out["am0"].I64).To(Equal([]int64{0, 1, 1}))
		})

		It("runs integer scalars and control flow in C, without a framework call", func() {
			before := ops.Counters()
			out := runTorch(ops, "ints", map[string]*tensor.Tensor{"n": tensor.Scalar(7), "d": tensor.Scalar(2)})
			Expect(out["w"].I64).To(Equal([]int64{-22}))
			after := ops.Counters()
			Expect(after.KernelCalls - before.KernelCalls).To(BeZero())
			Expect(after.BoundaryValidations - before.BoundaryValidations).To(Equal(int64(2)))
			Expect(after.ResultValidations - before.ResultValidations).To(BeNumerically(">", 0))
		})

		DescribeTable("broadcasts a row, a column and a scalar",
			func(batch int) {
				in := map[string]*tensor.Tensor{
					"x":   tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: 0.5, B: 2}, 7, batch, 5),
					"row": f32(sh(5), 1, -2, 0.5, 4, -8),
					"col": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 8, batch, 1),
				}
				agreeWithOracle(edgesF, "bcast", in, runTorch(edges, "bcast", in))
			},
			Entry("batch 1", 1), Entry("batch 16", 16), Entry("batch 129", 129),
		)

		It("reduces a rank-3 tensor along each axis, with and without keepdims", func() {
			data := make([]float32, 24)
			for i := range data {
				data[i] = float32((i*7)%11) - 5
			}
			in := map[string]*tensor.Tensor{"x": f32(sh(2, 3, 4), data...)}
			out := runTorch(edges, "cube", in)
			Expect(out["s1k"].Shape).To(Equal([]int{2, 1, 4}))
			Expect(out["mx2k"].Shape).To(Equal([]int{2, 3, 1}))
			agreeWithOracle(edgesF, "cube", in, out)
		})

		It("normalises rows stably, batch 1 and huge values included", func() {
			for _, x := range []*tensor.Tensor{
				f32(sh(1, 4), 1, 2, 3, 4),
				f32(sh(2, 4), 1e30, 1e30, -1e30, 0, 88, 89, 90, 91),
				f32(sh(2, 3), 7, 7, 7, -inf, 0, -inf),
			} {
				in := map[string]*tensor.Tensor{"x": x}
				agreeWithOracle(edgesF, "rows", in, runTorch(edges, "rows", in))
			}
		})

		It("propagates NaN through Softmax, Max and Argmax of a row", func() {
			in := map[string]*tensor.Tensor{"x": f32(sh(2, 3), 1, nan, 3, inf, 2, inf)}
			out := runTorch(edges, "rows", in)
			agreeWithOracle(edgesF, "rows", in, out)
			Expect(out["cls"].I64).To(Equal([]int64{1, 0}))
			Expect(math.IsNaN(float64(out["top"].F32[0]))).To(BeTrue())
			Expect(out["top"].F32[1]).To(Equal(inf))
		})

		// ATen's maximum/minimum/amax/relu treat two zeros of different
		// sign differently from rxeq's own kernels (which follow Go's
		// math.Max and math.Min): ATen returns the first operand where
		// rxeq's order of the signed zeros would pick the other. The values
		// compare equal (|−0 − +0| = 0), so only a later 1/x could tell.
		// This spec pins ATen's behaviour (documented in rx_aten.cc and the
		// package doc) and the NaN and infinity rules the two share.
		It("propagates NaN like rxeq and returns the first of two signed zeros (a documented difference)", func() {
			in := map[string]*tensor.Tensor{
				"a": f32(sh(6), negZero, 0, nan, 1, -inf, negZero),
				"b": f32(sh(6), 0, negZero, 2, nan, inf, negZero),
			}
			out := runTorch(edges, "zeros", in)
			agreeWithOracle(edgesF, "zeros", in, out)
			mx, mn, r := out["mx"].F32, out["mn"].F32, out["r"].F32
			Expect(math.Signbit(float64(mx[0]))).To(BeTrue(), "ATen: Maximum(-0, +0) = -0 (rxeq's kernel: +0)")
			Expect(math.Signbit(float64(mx[1]))).To(BeFalse())
			Expect(math.Signbit(float64(mn[0]))).To(BeTrue())
			Expect(math.Signbit(float64(mn[1]))).To(BeFalse(), "ATen: Minimum(+0, -0) = +0 (rxeq's kernel: -0)")
			Expect(math.IsNaN(float64(mx[2])) && math.IsNaN(float64(mx[3])) && math.IsNaN(float64(mn[2])) && math.IsNaN(float64(mn[3]))).To(BeTrue())
			Expect(mx[4]).To(Equal(inf))
			Expect(mn[4]).To(Equal(-inf))
			Expect(math.Signbit(float64(r[0]))).To(BeTrue(), "ATen: Relu(-0) = -0 (rxeq's kernel: +0)")
			Expect(math.IsNaN(float64(r[2]))).To(BeTrue())
			Expect(math.IsNaN(float64(out["top"].F32[0]))).To(BeTrue())
			Expect(out["cls"].I64).To(Equal([]int64{2}))
		})

		// The finding behind the spec above, end to end: 1/x turns the sign
		// of a zero into ±Inf, which the comparison matches exactly, so a
		// program that divides by Maximum(-0, +0), Minimum(+0, -0) or
		// Relu(-0) disagrees with the oracle on torch (and agrees on
		// native). rxeq keeps ATen's behaviour rather than patch it: the
		// torch executor exists to show what the framework computes.
		It("disagrees with the oracle on 1/x of those zeros, where native agrees", func() {
			in := map[string]*tensor.Tensor{"a": f32(sh(2), negZero, 2), "b": f32(sh(2), 0, 4)}
			want, err := oracle.Run(context.Background(), edgesF.Func("inv"), in)
			Expect(err).NotTo(HaveOccurred())
			got := runTorch(edges, "inv", in)
			nat := run(compile(edgesIR), "inv", in)
			// The oracle: 1/math.Max(-0, +0) = +Inf, 1/math.Min(+0, -0) =
			// -Inf, 1/Relu(-0) = 1/+0 = +Inf; ATen's zeros have the other
			// sign each time.
			for name, sign := range map[string]int{"mx": 1, "mn": -1, "r": 1} {
				Expect(want[name].F64[0]).To(Equal(math.Inf(sign)), name)
				Expect(float64(nat[name].F32[0])).To(Equal(math.Inf(sign)), "native %s", name)
				Expect(float64(got[name].F32[0])).To(Equal(math.Inf(-sign)), "torch %s", name)
				Expect(got[name].F32[1]).To(Equal(nat[name].F32[1]), name)
			}
		})

		It("takes Argmax of ties, ±Inf and a NaN-free row as the first maximum", func() {
			for _, tc := range []struct {
				a    []float32
				want int64
			}{
				{[]float32{1, 3, 3, 2, 3, 0}, 1},
				{[]float32{-inf, -inf, -inf, -inf, -inf, -inf}, 0},
				{[]float32{0, inf, 5, inf, nan, 1}, 4},
				{[]float32{negZero, 0, 0, negZero, -1, -2}, 0},
			} {
				in := map[string]*tensor.Tensor{"a": f32(sh(6), tc.a...), "b": tensor.NewFloat32(6)}
				out := runTorch(edges, "zeros", in)
				Expect(out["cls"].I64).To(Equal([]int64{tc.want}), "a=%v", tc.a)
			}
		})
	})

	It("runs a batch of zero rows like the native runtime", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		tp, np := compileTorch(p), compile(p)
		in := map[string]*tensor.Tensor{"x": tensor.NewFloat32(0, 32), "w": tensor.NewFloat32(32, 8), "b": tensor.NewFloat32(8)}
		got, terr := tp.Run(context.Background(), "score_linear", in)
		want, nerr := np.Run(context.Background(), "score_linear", in)
		Expect(nerr).NotTo(HaveOccurred())
		Expect(terr).NotTo(HaveOccurred())
		for name, w := range want.Outputs {
			Expect(got.Outputs[name].Shape).To(Equal(w.Shape), name)
		}
	})

	Describe("the invocation context", func() {
		It("validates each input once per call, each op result once, and calls the framework only for float ops", func() {
			_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
			prog := compileTorch(p)
			in := map[string]*tensor.Tensor{
				"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 1, 16, 32),
				"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 0.3}, 2, 32, 8),
				"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, 3, 8),
			}
			const calls = 1000
			for range calls {
				if _, err := prog.Run(context.Background(), "score_linear", in); err != nil {
					Fail(err.Error())
				}
			}
			c := prog.Counters()
			Expect(c.Calls).To(Equal(int64(calls)))
			Expect(c.BoundaryValidations).To(Equal(int64(3 * calls)))
			// The same 17 op results per call as the native runtime (see
			// counters_test.go); of them, the framework runs MatMul, +b,
			// the two products, the two Tanh, Softmax and Argmax (8): the
			// literal 0.5 and the copies are stores in C, the loop and the
			// CheckedRem are generated C.
			Expect(c.ResultValidations).To(Equal(int64(17 * calls)))
			Expect(c.KernelCalls).To(Equal(int64(8 * calls)))
			Expect(c.FactQueries).To(Equal(c.BoundaryValidations + c.ResultValidations))
			Expect(c.FactRequeries).To(BeZero())
			Expect(c.TrustedReuses).To(BeNumerically(">", 0))
			Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
		})

		It("reports no framework call from the native runtime", func() {
			_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
			prog := compile(p)
			in := map[string]*tensor.Tensor{"x": tensor.NewFloat32(2, 32), "w": tensor.NewFloat32(32, 8), "b": tensor.NewFloat32(8)}
			run(prog, "score_linear", in)
			Expect(prog.Counters().KernelCalls).To(BeZero())
		})

		It("fails bad inputs with the native runtime's texts", func() {
			_, p := parse("boundary.rx", readTestdata("boundary.rx"))
			tp, np := compileTorch(p), compile(p)
			for _, in := range []map[string]*tensor.Tensor{
				{"x": f32(sh(2, 3), 1, 2, 3, 4, 5, 6), "y": f32(sh(2), 1, 2), "k": tensor.Scalar(5)},
				{"x": f32(sh(2, 2), 1, 2, 3, 4), "y": f32(sh(3), 1, 2, 3), "k": tensor.Scalar(5)},
				{"x": tensor.NewFloat64(2, 2), "y": f32(sh(2), 1, 2), "k": tensor.Scalar(5)},
			} {
				_, terr := tp.Run(context.Background(), "two", in)
				_, nerr := np.Run(context.Background(), "two", in)
				Expect(terr).To(HaveOccurred())
				Expect(nerr).To(HaveOccurred())
				Expect(terr.Error()).To(Equal(nerr.Error()))
			}
		})
	})
})

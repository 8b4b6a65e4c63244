package fallback_test

import (
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// expectRuntimeError checks the exact text and the kind of err.
func expectRuntimeError(err error, text string, kind error) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(err.Error()).To(Equal(text))
	Expect(errors.Is(err, kind)).To(BeTrue(), "kind of %q", err)
	var re *ir.RuntimeError
	Expect(errors.As(err, &re)).To(BeTrue())
}

var _ = Describe("runtime errors", func() {
	Describe("checked arithmetic", func() {
		It("reports CheckedRem by zero", func() {
			_, err := run(intFn(ir.CheckedRem, 2), inputs{"a": tensor.Scalar(3), "c": tensor.Scalar(0)})
			expectRuntimeError(err, "f: CheckedRem: division by zero (a=3) at t.rx:2:7", ir.ErrDivisionByZero)
		})

		It("reports CheckedDiv by zero", func() {
			_, err := run(intFn(ir.CheckedDiv, 2), inputs{"a": tensor.Scalar(-5), "c": tensor.Scalar(0)})
			expectRuntimeError(err, "f: CheckedDiv: division by zero (a=-5) at t.rx:2:7", ir.ErrDivisionByZero)
		})

		It("reports MinInt64 / -1 as an overflow", func() {
			_, err := run(intFn(ir.CheckedDiv, 2), inputs{"a": tensor.Scalar(math.MinInt64), "c": tensor.Scalar(-1)})
			expectRuntimeError(err, "f: CheckedDiv: integer overflow (a=-9223372036854775808, divisor -1) at t.rx:2:7", ir.ErrOverflow)
		})

		It("stops the loop at the failing iteration", func() {
			// for i := range 5 { r = CheckedRem(i, 3 - i) } fails at i = 3.
			b := irtest.NewFunc("loopy")
			r := b.Result("r", ir.Int64)
			n := b.ConstI(5)
			three := b.ConstI(3)
			i := b.Val("i", ir.LoopIndex, ir.Int64)
			b.Loop(i, n, func() {
				d := b.Temp(ir.Int64)
				b.Op(ir.ISub, d, three, i)
				b.Op(ir.CheckedRem, r, i, d).Site = &ir.Site{Func: "loopy", Builtin: "CheckedRem", LHS: "i", Pos: "t.rx:7:8"}
			})
			_, err := run(b.Fn, inputs{})
			expectRuntimeError(err, "loopy: CheckedRem: division by zero (i=3) at t.rx:7:8", ir.ErrDivisionByZero)
		})
	})

	Describe("input binding", func() {
		// func score(x [B][3]float32, w [3][2]float32, n int64) (y [B][2]float32)
		scoreFn := func() *ir.Func {
			b := irtest.NewFunc("score")
			x := b.Param("x", ir.Float32, "B", 3)
			w := b.Param("w", ir.Float32, 3, 2)
			b.Param("n", ir.Int64)
			y := b.Result("y", ir.Float32, "B", 2)
			b.Op(ir.MatMul, y, x, w)
			return b.Fn
		}
		good := func() inputs {
			return inputs{"x": tensor.NewFloat32(4, 3), "w": tensor.NewFloat32(3, 2), "n": tensor.Scalar(1)}
		}

		It("accepts well-formed inputs", func() {
			out, err := run(scoreFn(), good())
			Expect(err).NotTo(HaveOccurred())
			Expect(out["y"].Shape).To(Equal([]int{4, 2}))
		})

		DescribeTable("rejects bad inputs with the shared texts",
			func(edit func(inputs), text string, kind error) {
				in := good()
				edit(in)
				_, err := run(scoreFn(), in)
				expectRuntimeError(err, text, kind)
			},
			Entry("missing input", func(in inputs) { delete(in, "w") },
				"score: missing input w ([3][2]float32)", ir.ErrMissingInput),
			Entry("unknown input", func(in inputs) { in["extra"] = tensor.Scalar(1) },
				"score: unknown input extra: the function has no such parameter", ir.ErrUnknownInput),
			Entry("wrong dtype", func(in inputs) { in["x"] = tensor.NewFloat64(4, 3) },
				"score: input x: dtype float64, want float32 ([B][3]float32)", ir.ErrDType),
			Entry("float32 for an int64 scalar", func(in inputs) { in["n"] = tensor.NewFloat32() },
				"score: input n: dtype float32, want int64 (int64)", ir.ErrDType),
			Entry("wrong rank", func(in inputs) { in["x"] = tensor.NewFloat32(12) },
				"score: input x: rank 1, want 2 ([B][3]float32)", ir.ErrRank),
			Entry("wrong constant dimension", func(in inputs) { in["w"] = tensor.NewFloat32(3, 5) },
				"score: input w: dimension 1 is 5, want 2 ([3][2]float32)", ir.ErrShape),
			Entry("malformed tensor", func(in inputs) { in["x"] = tensor.FromFloat32(make([]float32, 5), 4, 3) },
				"score: input x: invalid tensor: shape [4 3] needs 12 elements, data has 5", ir.ErrShape),
		)

		It("rejects a symbolic dimension bound inconsistently", func() {
			b := irtest.NewFunc("pair")
			x := b.Param("x", ir.Float32, "B", 3)
			y := b.Param("y", ir.Float32, "B", 3)
			z := b.Result("z", ir.Float32, "B", 3)
			b.Op(ir.Add, z, x, y)
			_, err := run(b.Fn, inputs{"x": tensor.NewFloat32(2, 3), "y": tensor.NewFloat32(5, 3)})
			expectRuntimeError(err, "pair: input y: dimension 0 (B) is 5, but B is 2 from input x", ir.ErrShape)
		})
	})

	Describe("malformed IR", func() {
		It("is refused by New with ErrInternal", func() {
			b := irtest.NewFunc("bad")
			x := b.Param("x", ir.Float32, 2)
			y := b.Result("y", ir.Float32, 2)
			b.Op(ir.Add, y, x) // one operand
			_, err := fallback.New(b.Fn)
			Expect(errors.Is(err, fallback.ErrInternal)).To(BeTrue())
			Expect(err.Error()).To(HavePrefix("bad: internal error: "))

			b = irtest.NewFunc("bad")
			x = b.Param("x", ir.Float32, 2)
			b.Op(ir.Neg, x, x) // writes a parameter
			_, err = fallback.New(b.Fn)
			Expect(err).To(MatchError(ContainSubstring("writes parameter %x.0")))
			Expect(errors.Is(err, fallback.ErrInternal)).To(BeTrue())

			_, err = fallback.New(nil)
			Expect(errors.Is(err, fallback.ErrInternal)).To(BeTrue())
		})

		It("refuses an op it does not know with ir.ErrUnsupported", func() {
			b := irtest.NewFunc("bad")
			y := b.Result("y", ir.Float32)
			b.Op(ir.OpKind(200), y)
			_, err := fallback.New(b.Fn)
			Expect(errors.Is(err, ir.ErrUnsupported)).To(BeTrue())
		})

		It("reports operand shapes that do not fit at run time, without panicking", func() {
			b := irtest.NewFunc("bad")
			x := b.Param("x", ir.Float32, 2, 4)
			y := b.Param("y", ir.Float32, 3)
			z := b.Result("z", ir.Float32, 2, 3)
			b.Op(ir.Add, z, x, y)
			_, err := run(b.Fn, inputs{"x": tensor.NewFloat32(2, 4), "y": tensor.NewFloat32(3)})
			Expect(errors.Is(err, fallback.ErrInternal)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring("do not fit"))
		})

		It("reports a value read before it is written", func() {
			b := irtest.NewFunc("bad")
			t := b.Temp(ir.Float32, 2)
			y := b.Result("y", ir.Float32, 2)
			b.Op(ir.Neg, y, t)
			_, err := run(b.Fn, inputs{})
			Expect(errors.Is(err, fallback.ErrInternal)).To(BeTrue())
			Expect(err.Error()).To(Equal("bad: internal error: value %0 is read before it is written"))
		})
	})
})

package oracle_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// twoInputs is f(x [B][3]float32, y [B]float32, n int64) (s [B]float32) { s = Sum(x, 1) + y; return }.
func twoInputs() *program.Func {
	b := newFunc("f")
	x := b.param("x", f32("B", 3))
	y := b.param("y", f32("B"))
	b.param("n", i64())
	s := b.result("s", f32("B"))
	return b.body(assign(s, bin(program.Add, callAxis(program.Sum, ref(x), 1, false), ref(y))), ret())
}

func goodInputs() map[string]*tensor.Tensor {
	return map[string]*tensor.Tensor{
		"x": t32(sh(2, 3), 1, 2, 3, 4, 5, 6),
		"y": t32(sh(2), 0.5, -1),
		"n": tensor.Scalar(1),
	}
}

var _ = Describe("the call boundary", func() {
	It("widens float32 inputs and returns float64 results", func() {
		out, err := oracle.Run(context.Background(), twoInputs(), goodInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(HaveLen(1))
		Expect(out["s"].DType).To(Equal(tensor.Float64))
		Expect(out["s"].Shape).To(Equal([]int{2}))
		Expect(out["s"].F64).To(Equal([]float64{6.5, 14}))
	})

	It("does not alias or modify the inputs", func() {
		b := newFunc("f")
		x := b.param("x", f32(2))
		n := b.param("n", i64())
		y := b.result("y", f32(2))
		m := b.result("m", i64())
		fn := b.body(assign(y, ref(x)), assign(m, ref(n)), ret())
		in := map[string]*tensor.Tensor{"x": t32(sh(2), 1, 2), "n": tensor.Scalar(5)}
		out, err := oracle.Run(context.Background(), fn, in)
		Expect(err).NotTo(HaveOccurred())
		out["m"].I64[0] = 99
		Expect(in["n"].I64[0]).To(Equal(int64(5)))
		Expect(in["x"].F32).To(Equal([]float32{1, 2}))
	})

	DescribeTable("rejects bad inputs with the shared texts and kinds",
		func(mutate func(map[string]*tensor.Tensor), kind error, text string) {
			in := goodInputs()
			mutate(in)
			out, err := oracle.Run(context.Background(), twoInputs(), in)
			Expect(out).To(BeNil())
			Expect(err).To(MatchError(text))
			Expect(errors.Is(err, kind)).To(BeTrue())
			var re *ir.RuntimeError
			Expect(errors.As(err, &re)).To(BeTrue())
		},
		Entry("missing input", func(m map[string]*tensor.Tensor) { delete(m, "y") },
			ir.ErrMissingInput, "f: missing input y ([B]float32)"),
		Entry("unknown input", func(m map[string]*tensor.Tensor) { m["z"] = tensor.Scalar(0) },
			ir.ErrUnknownInput, "f: unknown input z: the function has no such parameter"),
		Entry("wrong dtype (int64 for float32)", func(m map[string]*tensor.Tensor) { m["x"] = tensor.NewInt64(2, 3) },
			ir.ErrDType, "f: input x: dtype int64, want float32 ([B][3]float32)"),
		Entry("wrong dtype (float64 for float32)", func(m map[string]*tensor.Tensor) { m["y"] = tensor.NewFloat64(2) },
			ir.ErrDType, "f: input y: dtype float64, want float32 ([B]float32)"),
		Entry("wrong dtype (float32 for int64)", func(m map[string]*tensor.Tensor) { m["n"] = tensor.NewFloat32() },
			ir.ErrDType, "f: input n: dtype float32, want int64 (int64)"),
		Entry("wrong rank", func(m map[string]*tensor.Tensor) { m["x"] = tensor.NewFloat32(6) },
			ir.ErrRank, "f: input x: rank 1, want 2 ([B][3]float32)"),
		Entry("wrong constant dimension", func(m map[string]*tensor.Tensor) { m["x"] = tensor.NewFloat32(2, 4) },
			ir.ErrShape, "f: input x: dimension 1 is 4, want 3 ([B][3]float32)"),
		Entry("symbolic dimension bound inconsistently", func(m map[string]*tensor.Tensor) { m["y"] = tensor.NewFloat32(5) },
			ir.ErrShape, "f: input y: dimension 0 (B) is 5, but B is 2 from input x"),
		Entry("malformed tensor", func(m map[string]*tensor.Tensor) { m["y"] = tensor.FromFloat32([]float32{1}, 2) },
			ir.ErrShape, "f: input y: invalid tensor: shape [2] needs 2 elements, data has 1"),
	)

	It("binds a symbolic dimension of size 0", func() {
		in := map[string]*tensor.Tensor{"x": tensor.NewFloat32(0, 3), "y": tensor.NewFloat32(0), "n": tensor.Scalar(0)}
		out, err := oracle.Run(context.Background(), twoInputs(), in)
		Expect(err).NotTo(HaveOccurred())
		Expect(out["s"].Shape).To(Equal([]int{0}))
		Expect(out["s"].F64).To(BeEmpty())
	})

	It("reports a nil function as ErrInternal", func() {
		_, err := oracle.Run(context.Background(), nil, nil)
		Expect(errors.Is(err, oracle.ErrInternal)).To(BeTrue())
	})
})

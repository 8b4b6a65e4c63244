//go:build cgo

package native_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("boundary validation", Label("native"), Ordered, func() {
	var prog *native.Program
	var p *ir.Program
	good := func() map[string]*tensor.Tensor {
		return map[string]*tensor.Tensor{"x": f32(sh(2, 2), 1, 2, 3, 4), "y": f32(sh(2), 1, 2), "k": tensor.Scalar(5)}
	}

	BeforeAll(func() {
		_, p = parse("boundary.rx", readTestdata("boundary.rx"))
		prog = compile(p)
	})

	It("accepts good inputs, once each", func() {
		before := prog.Counters()
		out := run(prog, "two", good())
		Expect(out["z"].F32).To(Equal([]float32{2, 4, 6, 8}))
		Expect(out["n"].I64).To(Equal([]int64{6}))
		Expect(prog.Counters().BoundaryValidations - before.BoundaryValidations).To(Equal(int64(3)))
	})

	DescribeTable("fails exactly as the fallback does",
		func(edit func(map[string]*tensor.Tensor), kind error, text string) {
			in := good()
			edit(in)
			_, err := prog.Run(context.Background(), "two", in)
			Expect(err).To(HaveOccurred())
			_, want := fallbackRun(p, "two", in)
			Expect(want).To(HaveOccurred())
			Expect(err.Error()).To(Equal(want.Error()))
			Expect(err.Error()).To(Equal(text))
			Expect(errors.Is(err, kind)).To(BeTrue())
			var re *ir.RuntimeError
			Expect(errors.As(err, &re)).To(BeTrue())
		},
		Entry("missing input", func(in map[string]*tensor.Tensor) { delete(in, "y") }, ir.ErrMissingInput,
			"two: missing input y ([B]float32)"),
		Entry("unknown input", func(in map[string]*tensor.Tensor) { in["q"] = tensor.Scalar(1) }, ir.ErrUnknownInput,
			"two: unknown input q: the function has no such parameter"),
		Entry("malformed tensor", func(in map[string]*tensor.Tensor) { in["y"] = f32(sh(2), 1, 2, 3) }, ir.ErrShape,
			"two: input y: invalid tensor: shape [2] needs 2 elements, data has 3"),
		Entry("dtype", func(in map[string]*tensor.Tensor) { in["x"] = tensor.NewFloat64(2, 2) }, ir.ErrDType,
			"two: input x: dtype float64, want float32 ([B][2]float32)"),
		Entry("int64 scalar given as float32", func(in map[string]*tensor.Tensor) { in["k"] = f32(nil, 1) }, ir.ErrDType,
			"two: input k: dtype float32, want int64 (int64)"),
		Entry("rank", func(in map[string]*tensor.Tensor) { in["x"] = f32(sh(4), 1, 2, 3, 4) }, ir.ErrRank,
			"two: input x: rank 1, want 2 ([B][2]float32)"),
		Entry("rank above the native limit", func(in map[string]*tensor.Tensor) { in["y"] = tensor.NewFloat32(1, 1, 1, 1, 1, 2) }, ir.ErrRank,
			"two: input y: rank 6, want 1 ([B]float32)"),
		Entry("constant dimension", func(in map[string]*tensor.Tensor) { in["x"] = tensor.NewFloat32(2, 3) }, ir.ErrShape,
			"two: input x: dimension 1 is 3, want 2 ([B][2]float32)"),
		Entry("symbolic dimension", func(in map[string]*tensor.Tensor) { in["y"] = tensor.NewFloat32(3) }, ir.ErrShape,
			"two: input y: dimension 0 (B) is 3, but B is 2 from input x"),
	)

	It("validates the first bad input in parameter order, like ir.BindInputs", func() {
		in := good()
		in["y"] = tensor.NewFloat64(2)
		in["k"] = f32(nil, 1)
		_, err := prog.Run(context.Background(), "two", in)
		_, want := fallbackRun(p, "two", in)
		Expect(err).To(MatchError(want.Error()))
	})

	It("handles an empty batch", func() {
		out := run(prog, "two", map[string]*tensor.Tensor{"x": tensor.NewFloat32(0, 2), "y": tensor.NewFloat32(0), "k": tensor.Scalar(1)})
		Expect(out["z"].Shape).To(Equal([]int{0, 2}))
		Expect(out["z"].F32).To(BeEmpty())
	})
})

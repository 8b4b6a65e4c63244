package ir_test

import (
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

var (
	dimB   = ir.Dim{Sym: "B"}
	params = []ir.ParamSpec{
		{Name: "x", Type: ir.Type{DType: ir.Float32, Shape: []ir.Dim{dimB, {Size: 4}}}},
		{Name: "w", Type: ir.Type{DType: ir.Float32, Shape: []ir.Dim{{Size: 4}, {Size: 3}}}},
		{Name: "m", Type: ir.Type{DType: ir.Float32, Shape: []ir.Dim{dimB}}},
		{Name: "n", Type: ir.Type{DType: ir.Int64}},
	}
)

func good() map[string]*tensor.Tensor {
	return map[string]*tensor.Tensor{
		"x": tensor.NewFloat32(2, 4), "w": tensor.NewFloat32(4, 3), "m": tensor.NewFloat32(2), "n": tensor.Scalar(3),
	}
}

var _ = Describe("BindInputs", func() {
	It("binds symbolic dimensions from the first input that has them", func() {
		env, err := ir.BindInputs("f", params, good())
		Expect(err).NotTo(HaveOccurred())
		Expect(env).To(Equal(map[string]int64{"B": 2}))
		Expect(ir.Concrete(params[0].Type.Shape, env)).To(Equal([]int{2, 4}))
	})

	DescribeTable("rejects bad inputs with one stable text per kind",
		func(mutate func(map[string]*tensor.Tensor), kind error, text string) {
			in := good()
			mutate(in)
			_, err := ir.BindInputs("f", params, in)
			Expect(errors.Is(err, kind)).To(BeTrue(), "kind of %v", err)
			Expect(err).To(MatchError(text))
		},
		Entry("missing", func(in map[string]*tensor.Tensor) { delete(in, "w") }, ir.ErrMissingInput,
			"f: missing input w ([4][3]float32)"),
		Entry("unknown", func(in map[string]*tensor.Tensor) { in["zz"] = tensor.Scalar(1) }, ir.ErrUnknownInput,
			"f: unknown input zz: the function has no such parameter"),
		Entry("dtype", func(in map[string]*tensor.Tensor) { in["w"] = tensor.NewInt64(4, 3) }, ir.ErrDType,
			"f: input w: dtype int64, want float32 ([4][3]float32)"),
		Entry("float64 data", func(in map[string]*tensor.Tensor) { in["x"] = tensor.NewFloat64(2, 4) }, ir.ErrDType,
			"f: input x: dtype float64, want float32 ([B][4]float32)"),
		Entry("rank", func(in map[string]*tensor.Tensor) { in["x"] = tensor.NewFloat32(8) }, ir.ErrRank,
			"f: input x: rank 1, want 2 ([B][4]float32)"),
		Entry("constant dim", func(in map[string]*tensor.Tensor) { in["w"] = tensor.NewFloat32(4, 2) }, ir.ErrShape,
			"f: input w: dimension 1 is 2, want 3 ([4][3]float32)"),
		Entry("symbol bound inconsistently", func(in map[string]*tensor.Tensor) { in["m"] = tensor.NewFloat32(5) }, ir.ErrShape,
			"f: input m: dimension 0 (B) is 5, but B is 2 from input x"),
		Entry("malformed tensor", func(in map[string]*tensor.Tensor) { in["m"] = tensor.FromFloat32(nil, 2) }, ir.ErrShape,
			"f: input m: invalid tensor: shape [2] needs 2 elements, data has 0"),
		Entry("int scalar as tensor", func(in map[string]*tensor.Tensor) { in["n"] = tensor.NewInt64(1) }, ir.ErrRank,
			"f: input n: rank 1, want 0 (int64)"),
	)
})

var _ = Describe("checked arithmetic", func() {
	It("divides and takes remainders like Go, failing only where Go would panic", func() {
		q, ok := ir.CheckedDivide(-7, 2)
		Expect(ok).To(BeTrue())
		Expect(q).To(Equal(int64(-3)))
		r, ok := ir.CheckedRemainder(-7, 2)
		Expect(ok).To(BeTrue())
		Expect(r).To(Equal(int64(-1)))
		_, ok = ir.CheckedDivide(1, 0)
		Expect(ok).To(BeFalse())
		_, ok = ir.CheckedDivide(math.MinInt64, -1)
		Expect(ok).To(BeFalse())
		r, ok = ir.CheckedRemainder(math.MinInt64, -1)
		Expect(ok).To(BeTrue())
		Expect(r).To(BeZero())
		_, ok = ir.CheckedRemainder(5, 0)
		Expect(ok).To(BeFalse())
	})

	It("formats errors the same way for every executor", func() {
		site := &ir.Site{Func: "score_linear", Builtin: "CheckedRem", LHS: "round_idx", Pos: "s.rx:16:6"}
		err := ir.CheckedError(site, 3, 0)
		Expect(err).To(MatchError("score_linear: CheckedRem: division by zero (round_idx=3) at s.rx:16:6"))
		Expect(errors.Is(err, ir.ErrDivisionByZero)).To(BeTrue())
		site.Builtin = "CheckedDiv"
		err = ir.CheckedError(site, math.MinInt64, -1)
		Expect(err).To(MatchError("score_linear: CheckedDiv: integer overflow (round_idx=-9223372036854775808, divisor -1) at s.rx:16:6"))
		Expect(errors.Is(err, ir.ErrOverflow)).To(BeTrue())
	})
})

var _ = Describe("Type", func() {
	It("prints Go array syntax and compares dims", func() {
		t := ir.Type{DType: ir.Float32, Shape: []ir.Dim{dimB, {Size: 32}}}
		Expect(t.String()).To(Equal("[B][32]float32"))
		Expect(ir.ShapeString(t.Shape)).To(Equal("[B 32]"))
		Expect(t.Equal(ir.Type{DType: ir.Float32, Shape: []ir.Dim{dimB, {Size: 32}}})).To(BeTrue())
		Expect(t.Equal(ir.Type{DType: ir.Float32, Shape: []ir.Dim{dimB, {Size: 8}}})).To(BeFalse())
		Expect(ir.Type{DType: ir.Int64}.IsIntScalar()).To(BeTrue())
	})
})

var _ = Describe("CheckSizes", func() {
	f32 := func(ds ...any) ir.Type { return ir.Type{DType: ir.Float32, Shape: irtest.Dims(ds...)} }

	It("passes shapes that fit, a zero dimension, and shapes with unbound symbols", func() {
		env := map[string]int64{"B": 1 << 40, "Z": 0}
		Expect(ir.CheckSizes("f", []ir.Type{f32("B", 1<<19), f32("B", "B", "Z"), f32("U", "B", "B"), {DType: ir.Int64}}, env)).To(BeNil())
	})

	It("names the shape with the most elements, whatever the order of the types", func() {
		env := map[string]int64{"B": 1 << 40}
		types := []ir.Type{f32("B", 1<<21), f32("B", "B"), f32(1<<21, "B")}
		want := "f: shape [B B] is [1099511627776 1099511627776] with the inputs' dimensions (B=1099511627776): about 2^80 elements, more than the 1152921504606846975 (2^60 - 1) a tensor may hold"
		for range 3 {
			err := ir.CheckSizes("f", types, env)
			Expect(err).To(MatchError(want))
			Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
			types = append(types[1:], types[0])
		}
		// Equal counts: the larger dims, left to right, win.
		Expect(ir.CheckSizes("f", []ir.Type{f32("B", 1<<21), f32(1<<21, "B")}, env)).
			To(MatchError(ContainSubstring("shape [B 2097152] is [1099511627776 2097152]")))
		Expect(ir.CheckSizes("f", []ir.Type{f32(1<<21, "B"), f32("B", 1<<21)}, env)).
			To(MatchError(ContainSubstring("shape [B 2097152] is [1099511627776 2097152]")))
	})
})

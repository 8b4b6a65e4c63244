package onnx_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Signature", func() {
	p := func() *ir.Program { return lower("control.rx", controlSrc) }

	It("names a missing function with ErrNoFunction", func() {
		_, err := onnx.Describe(p(), "nope")
		Expect(errors.Is(err, onnx.ErrNoFunction)).To(BeTrue())
		_, err = onnx.Export(p(), "nope", onnx.Meta{})
		Expect(errors.Is(err, onnx.ErrNoFunction)).To(BeTrue())
	})

	It("turns the error output into rxeq's error, and refuses values the model cannot produce", func() {
		sig, err := onnx.Describe(p(), "errs")
		Expect(err).NotTo(HaveOccurred())
		Expect(sig.Err([]int64{0, 5, 0})).To(Succeed())
		e := sig.Err([]int64{1, 7, 0})
		var re *ir.RuntimeError
		Expect(errors.As(e, &re)).To(BeTrue())
		Expect(errors.Is(e, ir.ErrDivisionByZero)).To(BeTrue())
		Expect(e).To(MatchError("errs: CheckedDiv: division by zero (a=7) at control.rx:42:7"))
		Expect(errors.Is(sig.Err([]int64{1, -1 << 63, -1}), ir.ErrOverflow)).To(BeTrue())
		Expect(sig.Err([]int64{2, 7, 0})).To(MatchError("errs: CheckedRem: division by zero (a=7) at control.rx:45:10"))
		for _, bad := range [][]int64{{3, 0, 0}, {-1, 0, 0}, {1, 2}, nil} {
			Expect(errors.Is(sig.Err(bad), onnx.ErrBadErrorOutput)).To(BeTrue(), "%v", bad)
		}
	})

	It("writes a result that is read before anything writes it (hand-built IR) as zeros of its shape, symbolic dimensions read from the inputs", func() {
		requireONNX()
		// func f(x [B][3]float32, c int64) (y [B][3]float32, k int64) {
		//     if c > 0 { y = x + y }; k = k + c }
		f := &ir.Func{Name: "f", Pos: "hand.rx:1:1"}
		val := func(name string, kind ir.ValueKind, t ir.Type) *ir.Value {
			v := &ir.Value{ID: len(f.Values), Name: name, Kind: kind, Type: t}
			f.Values = append(f.Values, v)
			return v
		}
		mat := ir.Type{DType: ir.Float32, Shape: []ir.Dim{{Sym: "B"}, {Size: 3}}}
		i64 := ir.Type{DType: ir.Int64}
		x, c := val("x", ir.Param, mat), val("c", ir.Param, i64)
		y, k := val("y", ir.Result, mat), val("k", ir.Result, i64)
		zero, cond, sum, ksum := val("", ir.Temp, i64), val("", ir.Temp, ir.Type{DType: ir.Bool}), val("", ir.Temp, mat), val("", ir.Temp, i64)
		f.Params, f.Results = []*ir.Value{x, c}, []*ir.Value{y, k}
		f.Body = []ir.Instr{
			&ir.Op{Kind: ir.ConstI, Dst: zero, I: 0},
			&ir.Op{Kind: ir.Gt, Dst: cond, Args: []*ir.Value{c, zero}},
			&ir.If{Cond: cond, Then: []ir.Instr{
				&ir.Op{Kind: ir.Add, Dst: sum, Args: []*ir.Value{x, y}},
				&ir.Op{Kind: ir.Copy, Dst: y, Args: []*ir.Value{sum}},
			}},
			&ir.Op{Kind: ir.IAdd, Dst: ksum, Args: []*ir.Value{k, c}},
			&ir.Op{Kind: ir.Copy, Dst: k, Args: []*ir.Value{ksum}},
		}
		prog := &ir.Program{File: "hand.rx", Funcs: []*ir.Func{f}}
		b := export(prog, "f")
		Expect(checkModels(map[string][]byte{"f": b})).To(HaveKeyWithValue("f", ""))
		g := readWithPython(b).Graph
		Expect(ops(g)).To(ContainElements("Shape", "ConstantOfShape", "If"))
		x2 := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
		agree(evalCase{name: "c=1", p: prog, fn: "f", inputs: map[string]*tensor.Tensor{"x": x2, "c": tensor.Scalar(1)}},
			evalCase{name: "c=0", p: prog, fn: "f", inputs: map[string]*tensor.Tensor{"x": x2, "c": tensor.Scalar(0)}})
	})
})

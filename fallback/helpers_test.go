package fallback_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// fb builds an ir.Func by hand, appending instructions to the innermost
// open block.
type fb struct {
	fn  *ir.Func
	cur *[]ir.Instr
}

func newFn(name string) *fb {
	f := &ir.Func{Name: name, Pos: "t.rx:1:1"}
	return &fb{fn: f, cur: &f.Body}
}

// dims turns ints (constant sizes) and strings (symbols) into IR dims.
func dims(ds ...any) []ir.Dim {
	out := make([]ir.Dim, len(ds))
	for i, d := range ds {
		switch d := d.(type) {
		case int:
			out[i] = ir.Dim{Size: int64(d)}
		case string:
			out[i] = ir.Dim{Sym: d}
		}
	}
	return out
}

func (b *fb) val(name string, kind ir.ValueKind, dt ir.DType, ds ...any) *ir.Value {
	v := &ir.Value{ID: len(b.fn.Values), Name: name, Kind: kind, Type: ir.Type{DType: dt, Shape: dims(ds...)}}
	b.fn.Values = append(b.fn.Values, v)
	return v
}

func (b *fb) param(name string, dt ir.DType, ds ...any) *ir.Value {
	v := b.val(name, ir.Param, dt, ds...)
	b.fn.Params = append(b.fn.Params, v)
	return v
}

func (b *fb) result(name string, dt ir.DType, ds ...any) *ir.Value {
	v := b.val(name, ir.Result, dt, ds...)
	b.fn.Results = append(b.fn.Results, v)
	return v
}

func (b *fb) tmp(dt ir.DType, ds ...any) *ir.Value { return b.val("", ir.Temp, dt, ds...) }

func (b *fb) op(k ir.OpKind, dst *ir.Value, args ...*ir.Value) *ir.Op {
	o := &ir.Op{Kind: k, Dst: dst, Args: args}
	*b.cur = append(*b.cur, o)
	return o
}

func (b *fb) constF(f float64) *ir.Value {
	v := b.tmp(ir.Float32)
	b.op(ir.ConstF, v).F = f
	return v
}

func (b *fb) constI(i int64) *ir.Value {
	v := b.tmp(ir.Int64)
	b.op(ir.ConstI, v).I = i
	return v
}

func (b *fb) loop(index, count *ir.Value, body func()) {
	f := &ir.For{Index: index, Count: count, Pos: "t.rx:5:2"}
	*b.cur = append(*b.cur, f)
	saved := b.cur
	b.cur = &f.Body
	body()
	b.cur = saved
}

func (b *fb) cond(c *ir.Value, then, els func()) {
	f := &ir.If{Cond: c, Pos: "t.rx:6:3"}
	*b.cur = append(*b.cur, f)
	saved := b.cur
	b.cur = &f.Then
	then()
	if els != nil {
		b.cur = &f.Else
		els()
	}
	b.cur = saved
}

type inputs = map[string]*tensor.Tensor

func run(fn *ir.Func, in inputs) (map[string]*tensor.Tensor, error) {
	return fallback.Run(context.Background(), fn, in)
}

func f32(data []float32, shape ...int) *tensor.Tensor { return tensor.FromFloat32(data, shape...) }

// unaryFn is func f(x [n]float32) (y [n]float32) { y = k(x) }.
func unaryFn(k ir.OpKind, n int) *ir.Func {
	b := newFn("f")
	x := b.param("x", ir.Float32, n)
	y := b.result("y", ir.Float32, n)
	b.op(k, y, x)
	return b.fn
}

// binaryFn is func f(x [xs], y [ys]) (z [zs]) { z = k(x, y) }.
func binaryFn(k ir.OpKind, xs, ys, zs []any) *ir.Func {
	b := newFn("f")
	x := b.param("x", ir.Float32, xs...)
	y := b.param("y", ir.Float32, ys...)
	z := b.result("z", ir.Float32, zs...)
	b.op(k, z, x, y)
	return b.fn
}

// intFn is func f(a, c int64) (r int64) { r = k(a, c) } (or k(a) for one
// operand), with a checked-op site for CheckedDiv and CheckedRem.
func intFn(k ir.OpKind, arity int) *ir.Func {
	b := newFn("f")
	a := b.param("a", ir.Int64)
	c := b.param("c", ir.Int64)
	r := b.result("r", ir.Int64)
	args := []*ir.Value{a, c}[:arity]
	o := b.op(k, r, args...)
	if k == ir.CheckedDiv || k == ir.CheckedRem {
		o.Site = &ir.Site{Func: "f", Builtin: map[ir.OpKind]string{ir.CheckedDiv: "CheckedDiv", ir.CheckedRem: "CheckedRem"}[k], LHS: "a", Pos: "t.rx:2:7"}
	}
	return b.fn
}

// digest hashes every input tensor's shape and data, to prove they are
// left unchanged.
func digest(in inputs) [32]byte {
	h := sha256.New()
	for _, name := range []string{"x", "w", "b", "y", "a", "c", "n"} {
		t := in[name]
		if t == nil {
			continue
		}
		h.Write([]byte(name))
		for _, d := range t.Shape {
			_ = binary.Write(h, binary.LittleEndian, int64(d))
		}
		for _, v := range t.F32 {
			_ = binary.Write(h, binary.LittleEndian, math.Float32bits(v))
		}
		for _, v := range t.I64 {
			_ = binary.Write(h, binary.LittleEndian, v)
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func nan32() float32 { return float32(math.NaN()) }

// Package irtest builds ir.Funcs by hand, for executor tests that need
// what the .rx language cannot express: malformed IR, ops in shapes the
// checker refuses, exact instruction sequences. It is shared by the
// fallback and native suites so that both build their IR the same way.
package irtest

import "github.com/rextio/rxeq/program/ir"

// Builder appends values and instructions to Fn, instructions to the
// innermost open block (see Loop and Cond).
type Builder struct {
	Fn  *ir.Func
	cur *[]ir.Instr
}

// NewFunc starts a function named name, positioned at t.rx:1:1.
func NewFunc(name string) *Builder {
	f := &ir.Func{Name: name, Pos: "t.rx:1:1"}
	return &Builder{Fn: f, cur: &f.Body}
}

// Dims turns ints (constant sizes) and strings (symbols) into IR dims.
func Dims(ds ...any) []ir.Dim {
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

// Val adds a value of the given kind, dtype and dims (see Dims).
func (b *Builder) Val(name string, kind ir.ValueKind, dt ir.DType, ds ...any) *ir.Value {
	v := &ir.Value{ID: len(b.Fn.Values), Name: name, Kind: kind, Type: ir.Type{DType: dt, Shape: Dims(ds...)}}
	b.Fn.Values = append(b.Fn.Values, v)
	return v
}

// Param adds a parameter.
func (b *Builder) Param(name string, dt ir.DType, ds ...any) *ir.Value {
	v := b.Val(name, ir.Param, dt, ds...)
	b.Fn.Params = append(b.Fn.Params, v)
	return v
}

// Result adds a result.
func (b *Builder) Result(name string, dt ir.DType, ds ...any) *ir.Value {
	v := b.Val(name, ir.Result, dt, ds...)
	b.Fn.Results = append(b.Fn.Results, v)
	return v
}

// Temp adds an unnamed temporary.
func (b *Builder) Temp(dt ir.DType, ds ...any) *ir.Value { return b.Val("", ir.Temp, dt, ds...) }

// Op appends dst = k(args...) and returns it, for setting Axis, F and
// the other fields.
func (b *Builder) Op(k ir.OpKind, dst *ir.Value, args ...*ir.Value) *ir.Op {
	o := &ir.Op{Kind: k, Dst: dst, Args: args}
	*b.cur = append(*b.cur, o)
	return o
}

// ConstF appends a float32 scalar constant.
func (b *Builder) ConstF(f float64) *ir.Value {
	v := b.Temp(ir.Float32)
	b.Op(ir.ConstF, v).F = f
	return v
}

// ConstI appends an int64 scalar constant.
func (b *Builder) ConstI(i int64) *ir.Value {
	v := b.Temp(ir.Int64)
	b.Op(ir.ConstI, v).I = i
	return v
}

// Loop appends `for index := range count` and builds its body with body.
func (b *Builder) Loop(index, count *ir.Value, body func()) {
	f := &ir.For{Index: index, Count: count, Pos: "t.rx:5:2"}
	*b.cur = append(*b.cur, f)
	saved := b.cur
	b.cur = &f.Body
	body()
	b.cur = saved
}

// Cond appends `if c` with then and, when els is not nil, an else block.
func (b *Builder) Cond(c *ir.Value, then, els func()) {
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

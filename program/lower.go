package program

import (
	"fmt"

	"github.com/rextio/rxeq/program/ir"
)

// Lower turns a checked file into the IR. Every variable becomes a Value;
// every expression node becomes a Temp written once; an assignment is a
// Copy into the variable; && and || become an If that keeps Go's
// short-circuit order.
//
// Lower expects a File from Parse; a hand-built tree with a node the checker
// never produces is reported as an error wrapping ErrInvalid, not a panic.
func Lower(f *File) (p *ir.Program, err error) {
	if f == nil {
		return nil, fmt.Errorf("%w: Lower needs a checked file", ErrInvalid)
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%w: %v", ErrInvalid, r)
		}
	}()
	p = &ir.Program{File: f.Name}
	for _, fn := range f.Funcs {
		p.Funcs = append(p.Funcs, lowerFunc(fn))
	}
	return p, nil
}

type lowerer struct {
	src  *Func
	fn   *ir.Func
	vars map[*Var]*ir.Value
}

func lowerFunc(fn *Func) *ir.Func {
	l := &lowerer{src: fn, fn: &ir.Func{Name: fn.Name, Pos: fn.Pos.String()}, vars: map[*Var]*ir.Value{}}
	for _, v := range fn.Params {
		l.fn.Params = append(l.fn.Params, l.varValue(v))
	}
	for _, v := range fn.Results {
		l.fn.Results = append(l.fn.Results, l.varValue(v))
	}
	l.fn.Body = l.stmts(fn.Body)
	return l.fn
}

func (l *lowerer) newValue(name string, kind ir.ValueKind, t ir.Type) *ir.Value {
	v := &ir.Value{ID: len(l.fn.Values), Name: name, Kind: kind, Type: ir.Type{DType: t.DType, Shape: append([]ir.Dim(nil), t.Shape...)}}
	l.fn.Values = append(l.fn.Values, v)
	return v
}

func (l *lowerer) varValue(v *Var) *ir.Value {
	if val, ok := l.vars[v]; ok {
		return val
	}
	kind := map[VarKind]ir.ValueKind{ParamVar: ir.Param, ResultVar: ir.Result, LocalVar: ir.Var, IndexVar: ir.LoopIndex}[v.Kind]
	val := l.newValue(v.Name, kind, v.Type)
	l.vars[v] = val
	return val
}

func (l *lowerer) stmts(list []Stmt) []ir.Instr {
	var out []ir.Instr
	for _, s := range list {
		out = l.stmt(out, s)
	}
	return out
}

func (l *lowerer) stmt(out []ir.Instr, s Stmt) []ir.Instr {
	switch s := s.(type) {
	case *Assign:
		val, out := l.expr(out, s.Value)
		return append(out, &ir.Op{Kind: ir.Copy, Dst: l.varValue(s.Var), Args: []*ir.Value{val}})
	case *For:
		count, out := l.expr(out, s.Count)
		loop := &ir.For{Count: count, Pos: s.Pos.String(), Body: l.stmts(s.Body)}
		if s.Index != nil {
			loop.Index = l.varValue(s.Index)
		}
		return append(out, loop)
	case *If:
		cond, out := l.expr(out, s.Cond)
		return append(out, &ir.If{Cond: cond, Pos: s.Pos.String(), Then: l.stmts(s.Then), Else: l.stmts(s.Else)})
	case *Return:
		// All values are evaluated before any result is stored: a value
		// that is a result itself (return b, a) is snapshotted first, or
		// the copy into an earlier result would change what it reads.
		vals := make([]*ir.Value, len(s.Values))
		for i, e := range s.Values {
			vals[i], out = l.expr(out, e)
			if vals[i].Kind == ir.Result {
				snap := l.newValue("", ir.Temp, vals[i].Type)
				out = append(out, &ir.Op{Kind: ir.Copy, Dst: snap, Args: []*ir.Value{vals[i]}})
				vals[i] = snap
			}
		}
		for i, v := range vals {
			out = append(out, &ir.Op{Kind: ir.Copy, Dst: l.fn.Results[i], Args: []*ir.Value{v}})
		}
	}
	return out
}

var floatBinary = map[BinaryOp]ir.OpKind{Add: ir.Add, Sub: ir.Sub, Mul: ir.Mul, Div: ir.Div}
var intBinary = map[BinaryOp]ir.OpKind{Add: ir.IAdd, Sub: ir.ISub, Mul: ir.IMul, Eq: ir.Eq, Ne: ir.Ne, Lt: ir.Lt, Le: ir.Le, Gt: ir.Gt, Ge: ir.Ge}

var builtinOps = map[Builtin]ir.OpKind{
	MatMul: ir.MatMul, Transpose: ir.Transpose, Tanh: ir.Tanh, Exp: ir.Exp, Log: ir.Log, Sigmoid: ir.Sigmoid,
	Relu: ir.Relu, Abs: ir.Abs, Sqrt: ir.Sqrt, Maximum: ir.Maximum, Minimum: ir.Minimum, Softmax: ir.Softmax,
	LogSoftmax: ir.LogSoftmax, Sum: ir.Sum, Mean: ir.Mean, Max: ir.Max, Argmax: ir.Argmax,
	CheckedRem: ir.CheckedRem, CheckedDiv: ir.CheckedDiv,
}

// expr lowers e, appending its instructions to out, and returns the value
// holding its result. A variable read is the variable's own value.
func (l *lowerer) expr(out []ir.Instr, e Expr) (*ir.Value, []ir.Instr) {
	emit := func(kind ir.OpKind, t ir.Type, args ...*ir.Value) (*ir.Op, *ir.Value) {
		dst := l.newValue("", ir.Temp, t)
		op := &ir.Op{Kind: kind, Dst: dst, Args: args}
		out = append(out, op)
		return op, dst
	}
	switch e := e.(type) {
	case *VarRef:
		return l.varValue(e.Var), out
	case *FloatLit:
		op, dst := emit(ir.ConstF, e.Type())
		op.F = e.Value
		return dst, out
	case *IntLit:
		op, dst := emit(ir.ConstI, e.Type())
		op.I = e.Value
		return dst, out
	case *Unary:
		var x *ir.Value
		x, out = l.expr(out, e.X)
		kind := ir.Not
		if e.Op == Neg {
			kind = ir.Neg
			if e.Typ.IsIntScalar() {
				kind = ir.INeg
			}
		}
		_, dst := emit(kind, e.Typ, x)
		return dst, out
	case *Binary:
		if e.Op == AndAnd || e.Op == OrOr {
			return l.shortCircuit(out, e)
		}
		var x, y *ir.Value
		x, out = l.expr(out, e.X)
		y, out = l.expr(out, e.Y)
		kind := floatBinary[e.Op]
		if e.X.Type().IsIntScalar() {
			kind = intBinary[e.Op]
		}
		_, dst := emit(kind, e.Typ, x, y)
		return dst, out
	case *Call:
		args := make([]*ir.Value, len(e.Args))
		for i, a := range e.Args {
			args[i], out = l.expr(out, a)
		}
		op, dst := emit(builtinOps[e.Builtin], e.Typ, args...)
		op.Axis, op.KeepDims = e.Axis, e.KeepDims
		if e.Builtin == CheckedRem || e.Builtin == CheckedDiv {
			op.Site = e.Site(l.src.Name)
		}
		return dst, out
	}
	panic(fmt.Sprintf("lower: unexpected expression %T (not a checked tree)", e)) // recovered by Lower
}

// shortCircuit lowers a && b as `t = a; if t { t = b }` and a || b as
// `t = a; if t {} else { t = b }`, so b runs only when Go would run it.
func (l *lowerer) shortCircuit(out []ir.Instr, e *Binary) (*ir.Value, []ir.Instr) {
	var x *ir.Value
	x, out = l.expr(out, e.X)
	t := l.newValue("", ir.Var, e.Typ)
	out = append(out, &ir.Op{Kind: ir.Copy, Dst: t, Args: []*ir.Value{x}})
	y, rhs := l.expr(nil, e.Y)
	rhs = append(rhs, &ir.Op{Kind: ir.Copy, Dst: t, Args: []*ir.Value{y}})
	branch := &ir.If{Cond: t, Pos: e.At.String()}
	if e.Op == AndAnd {
		branch.Then = rhs
	} else {
		branch.Else = rhs
	}
	return t, append(out, branch)
}

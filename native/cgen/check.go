package cgen

import (
	"fmt"

	"github.com/rextio/rxeq/program/ir"
)

// MaxRank and MaxSyms mirror RX_MAX_RANK and RX_MAX_SYMS in rx_runtime.h:
// the largest rank of a value and the most symbolic dimensions of one
// function that generated code handles. They are part of the ABI: the
// caller sizes its dimension and symbol arrays by them.
const (
	MaxRank = 4
	MaxSyms = 16
)

// MaxFuncInstrs is the most IR instructions one function may have to be
// compiled natively. gcc's time at -O2 grows faster than linearly with the
// size of one C function (measured: 1,000 ops 1.4 s, 4,000 ops 8.7 s, and
// a 10,000-term expression over 200 s), so a larger function is refused
// before it reaches the compiler rather than hanging a run.
const MaxFuncInstrs = 2000

// unsupported builds the ErrUnsupported error for function fn.
func unsupported(fn, format string, args ...any) error {
	return fmt.Errorf("%w: function %s: %s", ErrUnsupported, fn, fmt.Sprintf(format, args...))
}

// checkFunc reports the first thing in f the native backend cannot compile,
// naming the op, dtype or rank; nil if all of f is supported. It also
// returns the symbolic dimensions in binding order (first appearance in the
// parameters, dims left to right).
func checkFunc(f *ir.Func) ([]string, error) {
	var syms []string
	seen := map[string]bool{}
	for _, p := range f.Params {
		if err := checkType(f.Name, "parameter "+p.Name, p.Type, false); err != nil {
			return nil, err
		}
		for _, d := range p.Type.Shape {
			if d.IsSym() && !seen[d.Sym] {
				seen[d.Sym] = true
				syms = append(syms, d.Sym)
			}
		}
	}
	if len(syms) > MaxSyms {
		return nil, unsupported(f.Name, "%d symbolic dimensions (at most %d)", len(syms), MaxSyms)
	}
	for _, r := range f.Results {
		if err := checkType(f.Name, "result "+r.Name, r.Type, false); err != nil {
			return nil, err
		}
	}
	for _, v := range f.Values {
		if err := checkType(f.Name, "value "+v.Ref(), v.Type, v.Kind != ir.Param && v.Kind != ir.Result); err != nil {
			return nil, err
		}
		for _, d := range v.Type.Shape {
			if d.IsSym() && !seen[d.Sym] {
				return nil, unsupported(f.Name, "value %s has symbolic dimension %s that no parameter binds", v.Ref(), d.Sym)
			}
		}
	}
	n := 0
	ir.Walk(f.Body, func(ir.Instr) { n++ })
	if n > MaxFuncInstrs {
		return nil, fmt.Errorf("%w: function %s has %d instructions after lowering; the native backend compiles at most %d per function (the C compiler's time grows faster than linearly with a function's size): split the computation into several functions or shorter expressions",
			ErrTooLarge, f.Name, n, MaxFuncInstrs)
	}
	var err error
	ir.Walk(f.Body, func(in ir.Instr) {
		if err != nil {
			return
		}
		switch in := in.(type) {
		case *ir.Op:
			err = checkOp(f.Name, in)
		case *ir.For:
			if !in.Count.Type.IsIntScalar() || (in.Index != nil && !in.Index.Type.IsIntScalar()) {
				err = unsupported(f.Name, "for loop at %s over %s", in.Pos, in.Count.Type)
			}
		case *ir.If:
			if in.Cond.Type.DType != ir.Bool || in.Cond.Type.Rank() != 0 {
				err = unsupported(f.Name, "if at %s on %s", in.Pos, in.Cond.Type)
			}
		default:
			err = unsupported(f.Name, "instruction %T", in)
		}
	})
	return syms, err
}

// checkType accepts float32 of rank 0..4, int64 of rank 0..4, and (for
// locals only) bool scalars.
func checkType(fn, what string, t ir.Type, local bool) error {
	switch t.DType {
	case ir.Float32, ir.Int64:
	case ir.Bool:
		if local && t.Rank() == 0 {
			return nil
		}
		return unsupported(fn, "%s has dtype %s (%s)", what, t.DType, t)
	default:
		return unsupported(fn, "%s has dtype %s (%s)", what, t.DType, t)
	}
	if t.Rank() > MaxRank {
		return unsupported(fn, "%s has rank %d (%s); at most %d", what, t.Rank(), t, MaxRank)
	}
	for _, d := range t.Shape {
		if !d.IsSym() && d.Size < 0 {
			return unsupported(fn, "%s has a negative dimension (%s)", what, t)
		}
	}
	return nil
}

func checkOp(fn string, o *ir.Op) error {
	bad := func() error {
		parts := ""
		for i, a := range o.Args {
			if i > 0 {
				parts += ", "
			}
			parts += a.Type.String()
		}
		return unsupported(fn, "op %s on (%s) -> %s", o.Kind, parts, o.Dst.Type)
	}
	f32 := func(v *ir.Value) bool { return v.Type.DType == ir.Float32 }
	iscalar := func(v *ir.Value) bool { return v.Type.IsIntScalar() }
	nargs := func(n int) bool { return len(o.Args) == n }
	switch o.Kind {
	case ir.ConstF:
		if !nargs(0) || !f32(o.Dst) || o.Dst.Type.Rank() != 0 {
			return bad()
		}
	case ir.ConstI:
		if !nargs(0) || !iscalar(o.Dst) {
			return bad()
		}
	case ir.Copy:
		if !nargs(1) || !o.Dst.Type.Equal(o.Args[0].Type) {
			return bad()
		}
	case ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Maximum, ir.Minimum:
		if !nargs(2) || !f32(o.Args[0]) || !f32(o.Args[1]) || !f32(o.Dst) {
			return bad()
		}
	case ir.Neg, ir.Tanh, ir.Exp, ir.Log, ir.Sigmoid, ir.Relu, ir.Abs, ir.Sqrt:
		if !nargs(1) || !f32(o.Args[0]) || !o.Dst.Type.Equal(o.Args[0].Type) {
			return bad()
		}
	case ir.MatMul:
		if !nargs(2) || !f32(o.Args[0]) || !f32(o.Args[1]) || o.Args[0].Type.Rank() != 2 || o.Args[1].Type.Rank() != 2 || !f32(o.Dst) {
			return bad()
		}
	case ir.Transpose:
		if !nargs(1) || !f32(o.Args[0]) || o.Args[0].Type.Rank() != 2 || !f32(o.Dst) {
			return bad()
		}
	case ir.Softmax, ir.LogSoftmax, ir.Sum, ir.Mean, ir.Max, ir.Argmax:
		if !nargs(1) || !f32(o.Args[0]) || o.Axis < 0 || o.Axis >= o.Args[0].Type.Rank() {
			return bad()
		}
		want := ir.Float32
		if o.Kind == ir.Argmax {
			want = ir.Int64
		}
		if o.Dst.Type.DType != want {
			return bad()
		}
	case ir.IAdd, ir.ISub, ir.IMul, ir.CheckedDiv, ir.CheckedRem, ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge:
		if !nargs(2) || !iscalar(o.Args[0]) || !iscalar(o.Args[1]) {
			return bad()
		}
		if (o.Kind == ir.CheckedDiv || o.Kind == ir.CheckedRem) && o.Site == nil {
			return bad()
		}
	case ir.INeg:
		if !nargs(1) || !iscalar(o.Args[0]) || !iscalar(o.Dst) {
			return bad()
		}
	case ir.Not:
		if !nargs(1) || o.Args[0].Type.DType != ir.Bool || o.Args[0].Type.Rank() != 0 {
			return bad()
		}
	default:
		return unsupported(fn, "op %s", o.Kind)
	}
	return nil
}

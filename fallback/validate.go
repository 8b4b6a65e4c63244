package fallback

import (
	"fmt"

	"github.com/rextio/rxeq/program/ir"
)

// validator checks the IR invariants the interpreter relies on, so that a
// malformed function is refused by New instead of failing mid-run.
type validator struct {
	fn *ir.Func
}

func (v *validator) errorf(format string, args ...any) error {
	return internalf(v.fn.Name, format, args...)
}

// value checks that val belongs to the function.
func (v *validator) value(val *ir.Value, what string) error {
	if val == nil {
		return v.errorf("%s: missing value", what)
	}
	if val.ID < 0 || val.ID >= len(v.fn.Values) || v.fn.Values[val.ID] != val {
		return v.errorf("%s: value %s is not in the function's value table", what, val.Ref())
	}
	return nil
}

func (v *validator) check() error {
	fn := v.fn
	for i, val := range fn.Values {
		if val == nil || val.ID != i {
			return v.errorf("value table entry %d has the wrong ID", i)
		}
		switch val.Type.DType {
		case ir.Float32, ir.Int64, ir.Bool:
		default:
			return &ir.RuntimeError{Kind: ir.ErrUnsupported, Func: fn.Name,
				Detail: fmt.Sprintf("value %s has unsupported dtype %s", val.Ref(), val.Type.DType)}
		}
	}
	for _, p := range fn.Params {
		if err := v.value(p, "parameter"); err != nil {
			return err
		}
		if p.Kind != ir.Param {
			return v.errorf("parameter %s has kind %s", p.Ref(), p.Kind)
		}
		if p.Type.DType != ir.Float32 && p.Type.DType != ir.Int64 {
			return v.errorf("parameter %s has dtype %s", p.Ref(), p.Type.DType)
		}
	}
	for _, r := range fn.Results {
		if err := v.value(r, "result"); err != nil {
			return err
		}
		if r.Type.DType != ir.Float32 && r.Type.DType != ir.Int64 {
			return v.errorf("result %s has dtype %s", r.Ref(), r.Type.DType)
		}
	}
	return v.body(fn.Body)
}

func (v *validator) body(body []ir.Instr) error {
	for _, in := range body {
		var err error
		switch in := in.(type) {
		case *ir.Op:
			err = v.op(in)
		case *ir.For:
			err = v.forLoop(in)
		case *ir.If:
			err = v.ifElse(in)
		default:
			err = v.errorf("unknown instruction %T", in)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) forLoop(f *ir.For) error {
	if err := v.value(f.Count, "for count"); err != nil {
		return err
	}
	if !f.Count.Type.IsIntScalar() {
		return v.errorf("for at %s: count %s is %s, want int64", f.Pos, f.Count.Ref(), f.Count.Type)
	}
	if f.Index != nil {
		if err := v.value(f.Index, "for index"); err != nil {
			return err
		}
		if !f.Index.Type.IsIntScalar() || f.Index.Kind == ir.Param {
			return v.errorf("for at %s: index %s is not a writable int64 scalar", f.Pos, f.Index.Ref())
		}
	}
	return v.body(f.Body)
}

func (v *validator) ifElse(f *ir.If) error {
	if err := v.value(f.Cond, "if condition"); err != nil {
		return err
	}
	if f.Cond.Type.DType != ir.Bool || f.Cond.Type.Rank() != 0 {
		return v.errorf("if at %s: condition %s is %s, want bool", f.Pos, f.Cond.Ref(), f.Cond.Type)
	}
	if err := v.body(f.Then); err != nil {
		return err
	}
	return v.body(f.Else)
}

// signature describes the operands an op kind takes.
type signature struct {
	args  int
	arg   ir.DType // dtype of every argument (InvalidDType: Copy, any)
	dst   ir.DType
	axis  bool // Axis must be a valid axis of Args[0]
	rank2 bool // arguments and result are rank 2
}

var signatures = map[ir.OpKind]signature{
	ir.ConstF: {0, ir.InvalidDType, ir.Float32, false, false},
	ir.ConstI: {0, ir.InvalidDType, ir.Int64, false, false},
	ir.Copy:   {1, ir.InvalidDType, ir.InvalidDType, false, false},

	ir.Add: {2, ir.Float32, ir.Float32, false, false}, ir.Sub: {2, ir.Float32, ir.Float32, false, false},
	ir.Mul: {2, ir.Float32, ir.Float32, false, false}, ir.Div: {2, ir.Float32, ir.Float32, false, false},
	ir.Maximum: {2, ir.Float32, ir.Float32, false, false}, ir.Minimum: {2, ir.Float32, ir.Float32, false, false},
	ir.Neg: {1, ir.Float32, ir.Float32, false, false},

	ir.Tanh: {1, ir.Float32, ir.Float32, false, false}, ir.Exp: {1, ir.Float32, ir.Float32, false, false},
	ir.Log: {1, ir.Float32, ir.Float32, false, false}, ir.Sigmoid: {1, ir.Float32, ir.Float32, false, false},
	ir.Relu: {1, ir.Float32, ir.Float32, false, false}, ir.Abs: {1, ir.Float32, ir.Float32, false, false},
	ir.Sqrt: {1, ir.Float32, ir.Float32, false, false},

	ir.MatMul:     {2, ir.Float32, ir.Float32, false, true},
	ir.Transpose:  {1, ir.Float32, ir.Float32, false, true},
	ir.Softmax:    {1, ir.Float32, ir.Float32, true, false},
	ir.LogSoftmax: {1, ir.Float32, ir.Float32, true, false},
	ir.Sum:        {1, ir.Float32, ir.Float32, true, false},
	ir.Mean:       {1, ir.Float32, ir.Float32, true, false},
	ir.Max:        {1, ir.Float32, ir.Float32, true, false},
	ir.Argmax:     {1, ir.Float32, ir.Int64, true, false},

	ir.IAdd: {2, ir.Int64, ir.Int64, false, false}, ir.ISub: {2, ir.Int64, ir.Int64, false, false},
	ir.IMul: {2, ir.Int64, ir.Int64, false, false}, ir.INeg: {1, ir.Int64, ir.Int64, false, false},
	ir.CheckedDiv: {2, ir.Int64, ir.Int64, false, false}, ir.CheckedRem: {2, ir.Int64, ir.Int64, false, false},

	ir.Eq: {2, ir.Int64, ir.Bool, false, false}, ir.Ne: {2, ir.Int64, ir.Bool, false, false},
	ir.Lt: {2, ir.Int64, ir.Bool, false, false}, ir.Le: {2, ir.Int64, ir.Bool, false, false},
	ir.Gt: {2, ir.Int64, ir.Bool, false, false}, ir.Ge: {2, ir.Int64, ir.Bool, false, false},
	ir.Not: {1, ir.Bool, ir.Bool, false, false},
}

// intScalarOp reports whether k works on int64 scalars (or bools) only.
func intScalarOp(k ir.OpKind) bool {
	return k >= ir.IAdd && k <= ir.Not
}

func (v *validator) op(o *ir.Op) error {
	sig, ok := signatures[o.Kind]
	if !ok {
		return &ir.RuntimeError{Kind: ir.ErrUnsupported, Func: v.fn.Name,
			Detail: fmt.Sprintf("unsupported op %s (kind %d)", o.Kind, int(o.Kind))}
	}
	if err := v.value(o.Dst, o.Kind.String()+" destination"); err != nil {
		return err
	}
	if o.Dst.Kind == ir.Param {
		return v.errorf("%s writes parameter %s", o.Kind, o.Dst.Ref())
	}
	for _, a := range o.Args {
		if err := v.value(a, o.Kind.String()+" operand"); err != nil {
			return err
		}
	}
	if len(o.Args) != sig.args {
		return v.errorf("%s: %d operands, want %d", o, len(o.Args), sig.args)
	}
	for _, a := range o.Args {
		if sig.arg != ir.InvalidDType && a.Type.DType != sig.arg {
			return v.errorf("%s: operand %s is %s, want %s", o, a.Ref(), a.Type, sig.arg)
		}
		if sig.rank2 && a.Type.Rank() != 2 {
			return v.errorf("%s: operand %s is %s, want rank 2", o, a.Ref(), a.Type)
		}
		if intScalarOp(o.Kind) && a.Type.Rank() != 0 {
			return v.errorf("%s: operand %s is %s, want a scalar", o, a.Ref(), a.Type)
		}
	}
	if sig.dst != ir.InvalidDType && o.Dst.Type.DType != sig.dst {
		return v.errorf("%s: destination is %s, want %s", o, o.Dst.Type, sig.dst)
	}
	if sig.rank2 && o.Dst.Type.Rank() != 2 {
		return v.errorf("%s: destination is %s, want rank 2", o, o.Dst.Type)
	}
	if (intScalarOp(o.Kind) || o.Kind == ir.ConstI) && o.Dst.Type.Rank() != 0 {
		return v.errorf("%s: destination is %s, want a scalar", o, o.Dst.Type)
	}
	if sig.axis && (o.Axis < 0 || o.Axis >= o.Args[0].Type.Rank()) {
		return v.errorf("%s: axis %d out of range for %s", o, o.Axis, o.Args[0].Type)
	}
	switch o.Kind {
	case ir.Copy:
		if o.Dst.Type.DType != o.Args[0].Type.DType || o.Dst.Type.Rank() != o.Args[0].Type.Rank() {
			return v.errorf("%s: copies %s into %s", o, o.Args[0].Type, o.Dst.Type)
		}
	case ir.CheckedDiv, ir.CheckedRem:
		if o.Site == nil {
			return v.errorf("%s: no source site", o)
		}
	}
	return nil
}

package oracle

import (
	"github.com/rextio/rxeq/program"
)

// expr evaluates an expression to a fresh or shared (never mutated) value.
func (e *evaluator) expr(x program.Expr) (*value, error) {
	switch x := x.(type) {
	case *program.VarRef:
		v, ok := e.vars[x.Var.ID]
		if !ok {
			return nil, e.internal("%s: %s read before it was assigned", x.At, x.Var.Name)
		}
		return v, nil
	case *program.FloatLit:
		v := x.Value
		if e.noise != nil {
			v = e.noise.round(v)
		}
		return floatValue(nil, []float64{v}), nil
	case *program.IntLit:
		return intScalar(x.Value), nil
	case *program.Unary:
		return e.unary(x)
	case *program.Binary:
		return e.binary(x)
	case *program.Call:
		return e.call(x)
	case nil:
		return nil, e.internal("nil expression")
	}
	return nil, e.internal("unknown expression %T", x)
}

// unary evaluates -x on a float tensor (elementwise) or an int64 scalar
// (wrapping: -MinInt64 == MinInt64), and !b on a bool.
func (e *evaluator) unary(x *program.Unary) (*value, error) {
	v, err := e.expr(x.X)
	if err != nil {
		return nil, err
	}
	switch {
	case x.Op == program.Neg && v.kind == floatKind:
		out := make([]float64, len(v.f))
		for i, a := range v.f {
			out[i] = -a
		}
		return floatValue(v.shape, out), nil
	case x.Op == program.Neg && v.kind == intKind:
		a, err := v.scalarInt()
		if err != nil {
			return nil, e.internal("%s: -: %v", x.At, err)
		}
		return intScalar(-a), nil
	case x.Op == program.Not && v.kind == boolKind:
		return boolValue(!v.b), nil
	}
	return nil, e.internal("%s: unary operator %d on a %s value", x.At, x.Op, v.kind)
}

// binary evaluates x op y. && and || evaluate Y only when X does not decide.
func (e *evaluator) binary(x *program.Binary) (*value, error) {
	l, err := e.expr(x.X)
	if err != nil {
		return nil, err
	}
	if x.Op == program.AndAnd || x.Op == program.OrOr {
		lb, err := l.asBool()
		if err != nil {
			return nil, e.internal("%s: logical operator: %v", x.At, err)
		}
		if (x.Op == program.AndAnd && !lb) || (x.Op == program.OrOr && lb) {
			return boolValue(lb), nil
		}
		r, err := e.expr(x.Y)
		if err != nil {
			return nil, err
		}
		rb, err := r.asBool()
		if err != nil {
			return nil, e.internal("%s: logical operator: %v", x.At, err)
		}
		return boolValue(rb), nil
	}
	r, err := e.expr(x.Y)
	if err != nil {
		return nil, err
	}
	if l.kind == floatKind && r.kind == floatKind {
		f := floatOp(x.Op)
		if f == nil {
			return nil, e.internal("%s: operator %d on floats", x.At, x.Op)
		}
		if e.noise != nil {
			f = e.noise.binary(f)
		}
		v, err := broadcast(l, r, f)
		if err != nil {
			return nil, e.internal("%s: %v", x.At, err)
		}
		return v, nil
	}
	a, err := l.scalarInt()
	if err != nil {
		return nil, e.internal("%s: integer operator: %v", x.At, err)
	}
	b, err := r.scalarInt()
	if err != nil {
		return nil, e.internal("%s: integer operator: %v", x.At, err)
	}
	return e.intBinary(x, a, b)
}

// floatOp returns the elementwise function of a float operator, or nil.
func floatOp(op program.BinaryOp) func(a, b float64) float64 {
	switch op {
	case program.Add:
		return func(a, b float64) float64 { return a + b }
	case program.Sub:
		return func(a, b float64) float64 { return a - b }
	case program.Mul:
		return func(a, b float64) float64 { return a * b }
	case program.Div:
		return func(a, b float64) float64 { return a / b }
	}
	return nil
}

// intBinary applies an integer operator to int64 scalars: + - * wrap in
// two's complement; comparisons give a bool. Integer / is not part of the
// language (CheckedDiv is).
func (e *evaluator) intBinary(x *program.Binary, a, b int64) (*value, error) {
	switch x.Op {
	case program.Add:
		return intScalar(a + b), nil
	case program.Sub:
		return intScalar(a - b), nil
	case program.Mul:
		return intScalar(a * b), nil
	case program.Eq:
		return boolValue(a == b), nil
	case program.Ne:
		return boolValue(a != b), nil
	case program.Lt:
		return boolValue(a < b), nil
	case program.Le:
		return boolValue(a <= b), nil
	case program.Gt:
		return boolValue(a > b), nil
	case program.Ge:
		return boolValue(a >= b), nil
	}
	return nil, e.internal("%s: operator %d on int64 scalars", x.At, x.Op)
}

package oracle

import (
	"math"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// call evaluates a builtin call. CheckedRem and CheckedDiv evaluate their
// operands left to right and fail with ir.CheckedError for the call's site.
func (e *evaluator) call(c *program.Call) (*value, error) {
	args := make([]*value, len(c.Args))
	for i, a := range c.Args {
		v, err := e.expr(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	want := arity(c.Builtin)
	if want == 0 {
		return nil, e.internal("%s: unknown builtin %d", c.At, c.Builtin)
	}
	if len(args) != want {
		return nil, e.internal("%s: %s with %d arguments, want %d", c.At, c.Builtin, len(args), want)
	}
	if c.Builtin == program.CheckedRem || c.Builtin == program.CheckedDiv {
		return e.checked(c, args[0], args[1])
	}
	for _, a := range args {
		if _, err := a.asFloat(); err != nil {
			return nil, e.internal("%s: %s: %v", c.At, c.Builtin, err)
		}
	}
	var (
		v   *value
		err error
	)
	if e.noise != nil {
		v, err = e.noise.builtin(c, args)
	} else {
		v, err = exactBuiltin(c, args)
	}
	if err != nil {
		return nil, e.internal("%s: %s: %v", c.At, c.Builtin, err)
	}
	return v, nil
}

// exactBuiltin evaluates a float builtin in float64.
func exactBuiltin(c *program.Call, args []*value) (v *value, err error) {
	switch c.Builtin {
	case program.MatMul:
		v, err = matMul(args[0], args[1])
	case program.Transpose:
		v, err = transpose(args[0])
	case program.Maximum:
		v, err = broadcast(args[0], args[1], maximum)
	case program.Minimum:
		v, err = broadcast(args[0], args[1], minimum)
	case program.Softmax, program.LogSoftmax, program.Sum, program.Mean, program.Max, program.Argmax:
		v, err = alongAxis(c.Builtin, args[0], c.Axis, c.KeepDims)
	default:
		v = elementwise(args[0], unaryFunc(c.Builtin))
	}
	return v, err
}

// arity returns the number of arguments a builtin takes (the axis and
// keepdims arguments are not in Call.Args), or 0 for an unknown builtin.
func arity(b program.Builtin) int {
	switch b {
	case program.MatMul, program.Maximum, program.Minimum, program.CheckedRem, program.CheckedDiv:
		return 2
	case program.Transpose, program.Tanh, program.Exp, program.Log, program.Sigmoid, program.Relu,
		program.Abs, program.Sqrt, program.Softmax, program.LogSoftmax, program.Sum, program.Mean,
		program.Max, program.Argmax:
		return 1
	}
	return 0
}

// checked evaluates CheckedRem or CheckedDiv on int64 scalars.
func (e *evaluator) checked(c *program.Call, l, r *value) (*value, error) {
	a, err := l.scalarInt()
	if err != nil {
		return nil, e.internal("%s: %s: %v", c.At, c.Builtin, err)
	}
	b, err := r.scalarInt()
	if err != nil {
		return nil, e.internal("%s: %s: %v", c.At, c.Builtin, err)
	}
	if len(c.ArgText) < 1 {
		return nil, e.internal("%s: %s without argument text", c.At, c.Builtin)
	}
	var (
		q  int64
		ok bool
	)
	if c.Builtin == program.CheckedRem {
		q, ok = ir.CheckedRemainder(a, b)
	} else {
		q, ok = ir.CheckedDivide(a, b)
	}
	if !ok {
		return nil, ir.CheckedError(c.Site(e.fn.Name), a, b)
	}
	return intScalar(q), nil
}

// unaryFunc returns the elementwise function of a unary builtin.
func unaryFunc(b program.Builtin) func(float64) float64 {
	switch b {
	case program.Tanh:
		return math.Tanh
	case program.Exp:
		return exp
	case program.Log:
		return math.Log
	case program.Sqrt:
		return math.Sqrt
	case program.Abs:
		return math.Abs
	case program.Sigmoid:
		return sigmoid
	case program.Relu:
		return relu
	}
	return nil
}

// sigmoid is 1/(1+exp(-x)): 0 at -Inf, 1 at +Inf, NaN at NaN. Below -40
// it is exp(x): there Sigmoid(x) = e^x/(1+e^x) differs from e^x by a
// factor within e^-40 < 2^-54 of 1, and exp(-x) would overflow float64
// below -709.78, giving 0 where e^x is a float64 subnormal.
func sigmoid(x float64) float64 {
	if x < -40 {
		return exp(x)
	}
	return 1 / (1 + exp(-x))
}

// expOverflow is where e^x passes the largest float64,
// 0x1.62e42fefa39efp+9 (the bound of every libm's exp).
const expOverflow = 7.09782712893383973096e+02

// exp is math.Exp, except near the top of the float64 range. On amd64
// math.Exp (an assembly routine) returns +Inf from x = 709.436139303104 on,
// where e^x is 1.27e308 and finite up to expOverflow, and so would
// Sigmoid(x) below -709.43 give 0 instead of a subnormal. There e^x is
// computed as e^(x-1)·e: x-1 is exact for x in [709, 710), and the two
// roundings add at most 0.8 ULP to math.Exp's 1.
func exp(x float64) float64 {
	if x >= 709 && x <= expOverflow {
		return math.Exp(x-1) * math.E
	}
	return math.Exp(x)
}

// relu is x for x > 0, NaN for NaN, +0 otherwise.
func relu(x float64) float64 {
	if x > 0 || math.IsNaN(x) {
		return x
	}
	return 0
}

// elementwise applies f to every element of a float value.
func elementwise(v *value, f func(float64) float64) *value {
	out := make([]float64, len(v.f))
	for i, x := range v.f {
		out[i] = f(x)
	}
	return floatValue(v.shape, out)
}

// maximum propagates NaN as NumPy's maximum does: NaN when either side is
// NaN (math.Max returns +Inf for Max(+Inf, NaN)); otherwise math.Max,
// which orders -0 below +0.
func maximum(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Max(x, y)
}

// minimum propagates NaN as NumPy's minimum does: NaN when either side is
// NaN (math.Min returns -Inf for Min(-Inf, NaN)); otherwise math.Min.
func minimum(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Min(x, y)
}

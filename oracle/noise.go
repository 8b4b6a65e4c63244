package oracle

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rextio/rxeq/program"
)

// noise is the rounding of a noise run: stochastic with r (see
// Options.Noise), to nearest without (Options.Nearest).
type noise struct{ r *rand.Rand }

// twoTo128 is where the float32 value after MaxFloat32 would be if the
// exponent range went on: the upper end used for the odds of rounding a
// value just past MaxFloat32 up to +Inf.
const twoTo128 = 0x1p128

// round rounds x to one of the two float32 values around it, the upper one
// with probability (x-lo)/(hi-lo), so E[round(x)] = x. NaN, ±Inf and
// values exactly representable in float32 are returned unchanged; a value
// that float32(x) rounds to ±Inf gives ±Inf. Between MaxFloat32 and that
// rounding threshold the value past MaxFloat32 is ±Inf, drawn with the
// probability 2^128 would have. Tiny values keep their sign: -1e-50 gives
// -0 (or, with negligible probability, minus the smallest subnormal).
func (n *noise) round(x float64) float64 {
	f32 := float32(x) // the nearest float32: one of the two neighbours
	f := float64(f32)
	if n.r == nil {
		return f // Options.Nearest
	}
	if f == x || x != x {
		return x // exact, ±0, ±Inf or NaN
	}
	b := math.Float32bits(f32)
	if b&0x7fffffff == 0x7f800000 {
		return f // overflow
	}
	// The other neighbour is one step further from zero when f is nearer
	// zero than x, else one step nearer zero. float32(x) keeps the sign of
	// x, even as ±0, so both neighbours have it.
	if math.Abs(f) < math.Abs(x) {
		b++
	} else {
		b--
	}
	g := float64(math.Float32frombits(b))
	span := g // the other neighbour as a finite number, for the odds
	if b&0x7fffffff == 0x7f800000 {
		span = math.Copysign(twoTo128, g)
	}
	if n.r.Float64()*math.Abs(span-f) < math.Abs(x-f) {
		return g
	}
	return f
}

// roundAll rounds every element of xs in place.
func (n *noise) roundAll(xs []float64) {
	for i, x := range xs {
		xs[i] = n.round(x)
	}
}

// binary returns f followed by a rounding.
func (n *noise) binary(f func(a, b float64) float64) func(a, b float64) float64 {
	return func(a, b float64) float64 { return n.round(f(a, b)) }
}

// builtin evaluates a float builtin in a noise run: the operations that
// round in float32 round here, the exact ones (Transpose, Maximum,
// Minimum, Abs, Relu, Max, Argmax) run as in the exact evaluation.
func (n *noise) builtin(c *program.Call, args []*value) (*value, error) {
	switch c.Builtin {
	case program.MatMul:
		return n.matMul(args[0], args[1])
	case program.Softmax, program.LogSoftmax, program.Sum, program.Mean:
		return n.alongAxis(c.Builtin, args[0], c.Axis, c.KeepDims)
	case program.Tanh, program.Exp, program.Log, program.Sqrt, program.Sigmoid:
		v := elementwise(args[0], unaryFunc(c.Builtin))
		n.roundAll(v.f)
		return v, nil
	}
	return exactBuiltin(c, args)
}

// matMul is matMul with each product and each partial sum rounded, the
// sums accumulated along the inner dimension in order.
func (n *noise) matMul(a, b *value) (*value, error) {
	if len(a.shape) != 2 || len(b.shape) != 2 || a.shape[1] != b.shape[0] {
		return nil, fmt.Errorf("shapes %v and %v do not multiply", a.shape, b.shape)
	}
	m, k, p := a.shape[0], a.shape[1], b.shape[1]
	size, err := checkedSize([]int{m, p})
	if err != nil {
		return nil, err
	}
	out := make([]float64, size)
	for i := range m {
		row := a.f[i*k : (i+1)*k]
		for j := range p {
			acc := 0.0
			for l, x := range row {
				acc = n.round(acc + n.round(x*b.f[l*p+j]))
			}
			out[i*p+j] = acc
		}
	}
	return floatValue([]int{m, p}, out), nil
}

// sum adds xs in order, rounding each partial sum.
func (n *noise) sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s = n.round(s + x)
	}
	return s
}

// alongAxis evaluates Softmax, LogSoftmax, Sum and Mean with their
// intermediates rounded (see Options.Noise).
func (n *noise) alongAxis(b program.Builtin, v *value, axis int, keepDims bool) (*value, error) {
	l, err := lanesOf(v.shape, axis)
	if err != nil {
		return nil, err
	}
	switch b {
	case program.Softmax, program.LogSoftmax:
		out := make([]float64, len(v.f))
		f := n.softmax
		if b == program.LogSoftmax {
			f = n.logSoftmax
		}
		l.each(v.f, out, true, func(buf []float64, _ int) { f(buf) })
		return floatValue(v.shape, out), nil
	}
	red := n.sum
	if b == program.Mean {
		red = func(buf []float64) float64 {
			return n.round(n.sum(buf) / float64(float32(len(buf))))
		}
	}
	out := make([]float64, l.outer*l.inner)
	l.each(v.f, nil, false, func(buf []float64, pos int) { out[pos] = red(buf) })
	return floatValue(reducedShape(v.shape, axis, keepDims), out), nil
}

// softmax is softmax with x-max, each exp, each partial sum and each
// quotient rounded.
func (n *noise) softmax(buf []float64) {
	m := nanMax(buf)
	for i, x := range buf {
		buf[i] = n.round(math.Exp(n.round(x - m)))
	}
	s := n.sum(buf)
	for i, x := range buf {
		buf[i] = n.round(x / s)
	}
}

// logSoftmax is logSoftmax with x-max, each exp, each partial sum, the log
// and the final subtraction rounded.
func (n *noise) logSoftmax(buf []float64) {
	m := nanMax(buf)
	s := 0.0
	for i, x := range buf {
		d := n.round(x - m)
		buf[i] = d
		s = n.round(s + n.round(math.Exp(d)))
	}
	ls := n.round(math.Log(s))
	for i, d := range buf {
		buf[i] = n.round(d - ls)
	}
}

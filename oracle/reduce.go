package oracle

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/rextio/rxeq/program"
)

// lanes describes a tensor of some shape seen along one axis: outer lanes
// before the axis, n elements along it, inner lanes after it. Element j of
// lane (o, in) is at o*n*inner + j*inner + in.
type lanes struct{ outer, n, inner int }

func lanesOf(shape []int, axis int) (lanes, error) {
	if axis < 0 || axis >= len(shape) {
		return lanes{}, fmt.Errorf("axis %d out of range for shape %v", axis, shape)
	}
	l := lanes{outer: 1, n: shape[axis], inner: 1}
	for _, d := range shape[:axis] {
		l.outer *= d
	}
	for _, d := range shape[axis+1:] {
		l.inner *= d
	}
	return l, nil
}

// each calls f for every lane with the lane gathered into buf; when write
// is set, buf is scattered back into dst afterwards. f also gets the lane's
// position in the reduced output, o*inner + in.
func (l lanes) each(src, dst []float64, write bool, f func(buf []float64, pos int)) {
	buf := make([]float64, l.n)
	for o := range l.outer {
		for in := range l.inner {
			base := o*l.n*l.inner + in
			for j := range buf {
				buf[j] = src[base+j*l.inner]
			}
			f(buf, o*l.inner+in)
			if write {
				for j, x := range buf {
					dst[base+j*l.inner] = x
				}
			}
		}
	}
}

// reducedShape drops axis from shape, or sets it to 1 with keepDims.
func reducedShape(shape []int, axis int, keepDims bool) []int {
	out := append([]int(nil), shape[:axis]...)
	if keepDims {
		out = append(out, 1)
	}
	return append(out, shape[axis+1:]...)
}

// alongAxis evaluates the axis builtins: Softmax and LogSoftmax keep the
// shape; Sum, Mean, Max and Argmax reduce the axis (kept with size 1 under
// keepDims); Argmax gives int64.
func alongAxis(b program.Builtin, v *value, axis int, keepDims bool) (*value, error) {
	l, err := lanesOf(v.shape, axis)
	if err != nil {
		return nil, err
	}
	switch b {
	case program.Softmax, program.LogSoftmax:
		out := make([]float64, len(v.f))
		f := softmax
		if b == program.LogSoftmax {
			f = logSoftmax
		}
		l.each(v.f, out, true, func(buf []float64, _ int) { f(buf) })
		return floatValue(v.shape, out), nil
	case program.Argmax:
		out := make([]int64, l.outer*l.inner)
		l.each(v.f, nil, false, func(buf []float64, pos int) { out[pos] = int64(argmax(buf)) })
		return &value{kind: intKind, shape: reducedShape(v.shape, axis, keepDims), i: out}, nil
	}
	var red func([]float64) float64
	switch b {
	case program.Sum:
		red = floats.Sum
	case program.Mean:
		red = func(buf []float64) float64 { return floats.Sum(buf) / float64(len(buf)) }
	case program.Max:
		red = nanMax
	default:
		return nil, fmt.Errorf("not an axis builtin")
	}
	out := make([]float64, l.outer*l.inner)
	l.each(v.f, nil, false, func(buf []float64, pos int) { out[pos] = red(buf) })
	return floatValue(reducedShape(v.shape, axis, keepDims), out), nil
}

// nanMax is the maximum of xs, NaN if any element is NaN, -Inf if xs is
// empty; of -0 and +0 it is +0 wherever they stand, as Maximum's (and the
// fallback's and native's Max). (floats.Max ignores a NaN that is not the
// first element.)
func nanMax(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		if math.IsNaN(x) {
			return x
		}
		m = math.Max(m, x)
	}
	return m
}

// argmax is the index of the first NaN if there is one, else of the first
// occurrence of the maximum; 0 for an empty lane.
func argmax(xs []float64) int {
	best := 0
	for i, x := range xs {
		if math.IsNaN(x) {
			return i
		}
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// softmax replaces buf by exp(x - max) / sum(exp(x - max)).
func softmax(buf []float64) {
	floats.AddConst(-nanMax(buf), buf)
	for i, x := range buf {
		buf[i] = math.Exp(x)
	}
	s := floats.Sum(buf)
	for i := range buf {
		buf[i] /= s
	}
}

// logSoftmax replaces buf by (x - max) - log(sum(exp(x - max))).
func logSoftmax(buf []float64) {
	floats.AddConst(-nanMax(buf), buf)
	s := 0.0
	for _, x := range buf {
		s += math.Exp(x)
	}
	floats.AddConst(-math.Log(s), buf)
}

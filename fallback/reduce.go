package fallback

import (
	"math"
	"slices"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// axisLayout splits shape around axis: outer × n × inner elements, the
// axis' elements inner apart.
func axisLayout(shape []int, axis int) (outer, n, inner int) {
	return tensor.NumElements(shape[:axis]), shape[axis], tensor.NumElements(shape[axis+1:])
}

// softmax runs Softmax or LogSoftmax along o.Axis. For each slice: m is the
// maximum, e_k = exp(x_k - m) (the difference in float32, exp in float64
// rounded to float32), s = e_0 + e_1 + … in float32; Softmax writes e_k / s,
// LogSoftmax writes (x_k - m) - float32(log(s)).
func (st *state) softmax(o *ir.Op) error {
	a, err := st.float(o.Args[0])
	if err != nil {
		return err
	}
	shape := st.shapes[o.Args[0].ID]
	if len(a) != tensor.NumElements(shape) || !slices.Equal(shape, st.shapes[o.Dst.ID]) {
		return st.shapeError(o)
	}
	out := st.dstFloat(o, true)
	outer, n, inner := axisLayout(shape, o.Axis)
	if n == 0 {
		return nil
	}
	for p := 0; p < outer; p++ {
		for q := 0; q < inner; q++ {
			base := p*n*inner + q
			m := a[base]
			for k := 1; k < n; k++ {
				if x := a[base+k*inner]; x > m {
					m = x
				}
			}
			var s float32
			if o.Kind == ir.Softmax {
				for k := 0; k < n; k++ {
					e := float32(math.Exp(float64(a[base+k*inner] - m)))
					out[base+k*inner] = e
					s += e
				}
				for k := 0; k < n; k++ {
					out[base+k*inner] /= s
				}
				continue
			}
			for k := 0; k < n; k++ {
				d := a[base+k*inner] - m
				out[base+k*inner] = d
				s += float32(math.Exp(float64(d)))
			}
			ls := float32(math.Log(float64(s)))
			for k := 0; k < n; k++ {
				out[base+k*inner] -= ls
			}
		}
	}
	return nil
}

// lanes returns the float operand of a reduction along o.Axis and its
// layout, after checking that the result holds one element per lane.
func (st *state) lanes(o *ir.Op) (a []float32, outer, n, inner int, err error) {
	if a, err = st.float(o.Args[0]); err != nil {
		return nil, 0, 0, 0, err
	}
	shape := st.shapes[o.Args[0].ID]
	outer, n, inner = axisLayout(shape, o.Axis)
	if len(a) != tensor.NumElements(shape) || tensor.NumElements(st.shapes[o.Dst.ID]) != outer*inner {
		return nil, 0, 0, 0, st.shapeError(o)
	}
	return a, outer, n, inner, nil
}

// reduce runs Sum, Mean or Max along o.Axis; the result holds outer × inner
// elements whether or not the axis is kept.
func (st *state) reduce(o *ir.Op) error {
	a, outer, n, inner, err := st.lanes(o)
	if err != nil {
		return err
	}
	out := st.dstFloat(o, false)
	for p := 0; p < outer; p++ {
		for q := 0; q < inner; q++ {
			base := p*n*inner + q
			var r float32
			switch o.Kind {
			case ir.Max:
				r = float32(math.Inf(-1))
				for k := 0; k < n && r == r; k++ {
					r = maximum(r, a[base+k*inner])
				}
			default:
				for k := 0; k < n; k++ {
					r += a[base+k*inner]
				}
				if o.Kind == ir.Mean {
					r /= float32(n)
				}
			}
			out[p*inner+q] = r
		}
	}
	return nil
}

// argmax writes, for each slice along o.Axis, the index of its first
// maximum, or of its first NaN if it holds one (NumPy); 0 for an empty axis.
func (st *state) argmax(o *ir.Op) error {
	a, outer, n, inner, err := st.lanes(o)
	if err != nil {
		return err
	}
	s := &st.slots[o.Dst.ID]
	size := outer * inner
	if o.Dst.Type.Rank() == 0 {
		s.iv, s.set = argmaxSlice(a, 0, n, inner), true
		return nil
	}
	if cap(s.i) >= size {
		s.i = s.i[:size]
	} else {
		s.i = make([]int64, size)
	}
	s.set = true
	for p := 0; p < outer; p++ {
		for q := 0; q < inner; q++ {
			s.i[p*inner+q] = argmaxSlice(a, p*n*inner+q, n, inner)
		}
	}
	return nil
}

func argmaxSlice(a []float32, base, n, stride int) int64 {
	if n == 0 {
		return 0
	}
	best, m := 0, a[base]
	if m != m {
		return 0
	}
	for k := 1; k < n; k++ {
		x := a[base+k*stride]
		if x != x {
			return int64(k)
		}
		if x > m {
			best, m = k, x
		}
	}
	return int64(best)
}

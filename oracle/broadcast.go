package oracle

import (
	"fmt"
	"slices"

	"github.com/rextio/rxeq/tensor"
)

// broadcastShape returns the NumPy broadcast of two shapes: aligned at the
// right, equal sizes stay, a size of 1 stretches to the other side's size.
func broadcastShape(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		da, db := dimFromRight(a, n-1-i), dimFromRight(b, n-1-i)
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// dimFromRight returns the size of shape's k-th dimension counted from the
// right (0 is the last), or 1 when shape has fewer dimensions.
func dimFromRight(shape []int, k int) int {
	if k >= len(shape) {
		return 1
	}
	return shape[len(shape)-1-k]
}

// broadcastStrides returns the strides to read a tensor of shape in into an
// output of shape out: 0 for a stretched or missing dimension.
func broadcastStrides(in, out []int) []int {
	st := tensor.Strides(in)
	s := make([]int, len(out))
	off := len(out) - len(in)
	for i := range in {
		if in[i] != 1 || out[off+i] == 1 {
			s[off+i] = st[i]
		}
	}
	return s
}

// broadcast applies f elementwise to two float values with NumPy
// broadcasting.
func broadcast(a, b *value, f func(x, y float64) float64) (*value, error) {
	if _, err := a.asFloat(); err != nil {
		return nil, err
	}
	if _, err := b.asFloat(); err != nil {
		return nil, err
	}
	shape, err := broadcastShape(a.shape, b.shape)
	if err != nil {
		return nil, err
	}
	size, err := checkedSize(shape)
	if err != nil {
		return nil, err
	}
	out := make([]float64, size)
	switch {
	case slices.Equal(a.shape, b.shape):
		for i := range out {
			out[i] = f(a.f[i], b.f[i])
		}
	case len(b.f) == 1:
		y := b.f[0]
		for i := range out {
			out[i] = f(a.f[i%len(a.f)], y)
		}
	case len(a.f) == 1:
		x := a.f[0]
		for i := range out {
			out[i] = f(x, b.f[i%len(b.f)])
		}
	default:
		sa, sb := broadcastStrides(a.shape, shape), broadcastStrides(b.shape, shape)
		idx := make([]int, len(shape))
		ia, ib := 0, 0
		for i := range out {
			out[i] = f(a.f[ia], b.f[ib])
			// Advance the odometer and both read offsets.
			for d := len(shape) - 1; d >= 0; d-- {
				idx[d]++
				ia += sa[d]
				ib += sb[d]
				if idx[d] < shape[d] {
					break
				}
				ia -= sa[d] * shape[d]
				ib -= sb[d] * shape[d]
				idx[d] = 0
			}
		}
	}
	return floatValue(shape, out), nil
}

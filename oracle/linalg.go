package oracle

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rextio/rxeq/tensor"
)

// matMul multiplies a [m][k] by b [k][n] into [m][n]. Finite operands go
// through gonum's mat.Dense Mul. gonum skips a zero multiplicand, which
// would make 0*Inf and 0*NaN contribute 0; operands holding any non-finite
// value are multiplied with a plain loop instead, so the result follows
// IEEE 754 as the float32 executors do. Empty dimensions give zeros (k == 0)
// or an empty result (m == 0 or n == 0); gonum refuses empty matrices.
func matMul(a, b *value) (*value, error) {
	if len(a.shape) != 2 || len(b.shape) != 2 || a.shape[1] != b.shape[0] {
		return nil, fmt.Errorf("shapes %v and %v do not multiply", a.shape, b.shape)
	}
	m, k, n := a.shape[0], a.shape[1], b.shape[1]
	size, err := checkedSize([]int{m, n})
	if err != nil {
		return nil, err
	}
	out := make([]float64, size)
	switch {
	case m == 0 || n == 0 || k == 0:
	case allFinite(a.f) && allFinite(b.f):
		c := mat.NewDense(m, n, out)
		c.Mul(mat.NewDense(m, k, a.f), mat.NewDense(k, n, b.f))
	default:
		for i := range m {
			row := out[i*n : (i+1)*n]
			for l := range k {
				x := a.f[i*k+l]
				for j, y := range b.f[l*n : (l+1)*n] {
					row[j] += float64(x * y) // the conversion forbids a fused multiply-add
				}
			}
		}
	}
	return floatValue([]int{m, n}, out), nil
}

// allFinite reports whether no element is NaN or ±Inf.
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// transpose swaps the two dimensions of a rank-2 value.
func transpose(a *value) (*value, error) {
	if len(a.shape) != 2 {
		return nil, fmt.Errorf("rank %d, want rank 2", len(a.shape))
	}
	r, c := a.shape[0], a.shape[1]
	out := make([]float64, r*c)
	for i := range r {
		for j := range c {
			out[j*r+i] = a.f[i*c+j]
		}
	}
	return floatValue([]int{c, r}, out), nil
}

// checkedSize returns the element count of a result shape, or an error
// when it overflows. Run checks every shape of the function with
// ir.CheckSizes first, so this is a second line of defence: a result whose
// shape disagrees with its checked type fails as an internal error instead
// of allocating a wrapped size.
func checkedSize(shape []int) (int, error) {
	n, ok := tensor.CheckedNumElements(shape)
	if !ok {
		return 0, fmt.Errorf("result shape %v has more than %d elements", shape, tensor.MaxElements)
	}
	return n, nil
}

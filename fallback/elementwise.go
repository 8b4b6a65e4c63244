package fallback

import (
	"math"
	"slices"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// binary runs Add, Sub, Mul, Div, Maximum or Minimum with NumPy
// broadcasting. The operand shapes are aligned to the right; each output
// dimension is walked with a per-operand stride that is 0 where the operand
// broadcasts. Adjacent dimensions that are contiguous for both operands are
// merged, so equal shapes and scalar operands become one flat loop and a
// row-vector bias [C] over [B][C] becomes B loops of C.
func (st *state) binary(o *ir.Op) error {
	a, err := st.float(o.Args[0])
	if err != nil {
		return err
	}
	b, err := st.float(o.Args[1])
	if err != nil {
		return err
	}
	oshape := st.shapes[o.Dst.ID]
	ashape, bshape := st.shapes[o.Args[0].ID], st.shapes[o.Args[1].ID]
	if len(a) != tensor.NumElements(ashape) || len(b) != tensor.NumElements(bshape) {
		return st.shapeError(o)
	}
	dims, as, bs, ok := broadcastStrides(oshape, ashape, bshape)
	if !ok {
		return st.shapeError(o)
	}
	out := st.dstFloat(o, true)
	if len(out) == 0 {
		return nil
	}
	r := len(dims)
	inner := dims[r-1]
	if r == 1 {
		kernel(o.Kind, out, a, as[0], b, bs[0])
		return nil
	}
	// Odometer over the outer dimensions.
	idx := make([]int, r-1)
	ao, bo := 0, 0
	for off := 0; off < len(out); off += inner {
		kernel(o.Kind, out[off:off+inner], a[ao:], as[r-1], b[bo:], bs[r-1])
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			ao += as[d]
			bo += bs[d]
			if idx[d] < dims[d] {
				break
			}
			ao -= as[d] * dims[d]
			bo -= bs[d] * dims[d]
			idx[d] = 0
		}
	}
	return nil
}

// broadcastStrides returns the output dims (merged where possible, at least
// one) and each operand's element stride along them, or ok=false when the
// operands do not broadcast to oshape.
func broadcastStrides(oshape, ashape, bshape []int) (dims, as, bs []int, ok bool) {
	r := len(oshape)
	if len(ashape) > r || len(bshape) > r {
		return nil, nil, nil, false
	}
	sa, okA := alignedStrides(oshape, ashape)
	sb, okB := alignedStrides(oshape, bshape)
	if !okA || !okB {
		return nil, nil, nil, false
	}
	dims, as, bs = []int{1}, []int{0}, []int{0}
	for d := 0; d < r; d++ {
		if oshape[d] == 1 {
			continue // a size-1 dimension moves nothing
		}
		last := len(dims) - 1
		if as[last] == sa[d]*oshape[d] && bs[last] == sb[d]*oshape[d] || dims[last] == 1 {
			dims[last] *= oshape[d]
			as[last], bs[last] = sa[d], sb[d]
			continue
		}
		dims, as, bs = append(dims, oshape[d]), append(as, sa[d]), append(bs, sb[d])
	}
	return dims, as, bs, true
}

// alignedStrides returns shape's row-major strides aligned to the right of
// oshape, 0 where shape broadcasts (missing or size 1).
func alignedStrides(oshape, shape []int) ([]int, bool) {
	r, off := len(oshape), len(oshape)-len(shape)
	s := make([]int, r)
	n := 1
	for d := r - 1; d >= off; d-- {
		size := shape[d-off]
		switch {
		case size == oshape[d]:
			if size != 1 {
				s[d] = n
			}
		case size == 1:
		default:
			return nil, false
		}
		n *= size
	}
	return s, true
}

// kernel computes len(out) elements of a op b, stepping a by as and b by bs
// (each 0 or 1 after merging, or a larger stride in the outer loop's
// residue: any value works).
func kernel(k ir.OpKind, out, a []float32, as int, b []float32, bs int) {
	switch {
	case as == 1 && bs == 1:
		a, b = a[:len(out)], b[:len(out)]
		switch k {
		case ir.Add:
			for i := range out {
				out[i] = a[i] + b[i]
			}
		case ir.Sub:
			for i := range out {
				out[i] = a[i] - b[i]
			}
		case ir.Mul:
			for i := range out {
				out[i] = a[i] * b[i]
			}
		case ir.Div:
			for i := range out {
				out[i] = a[i] / b[i]
			}
		default:
			for i := range out {
				out[i] = apply(k, a[i], b[i])
			}
		}
	case as == 1 && bs == 0:
		a, y := a[:len(out)], b[0]
		switch k {
		case ir.Add:
			for i := range out {
				out[i] = a[i] + y
			}
		case ir.Sub:
			for i := range out {
				out[i] = a[i] - y
			}
		case ir.Mul:
			for i := range out {
				out[i] = a[i] * y
			}
		case ir.Div:
			for i := range out {
				out[i] = a[i] / y
			}
		default:
			for i := range out {
				out[i] = apply(k, a[i], y)
			}
		}
	case as == 0 && bs == 1:
		x, b := a[0], b[:len(out)]
		switch k {
		case ir.Add:
			for i := range out {
				out[i] = x + b[i]
			}
		case ir.Sub:
			for i := range out {
				out[i] = x - b[i]
			}
		case ir.Mul:
			for i := range out {
				out[i] = x * b[i]
			}
		case ir.Div:
			for i := range out {
				out[i] = x / b[i]
			}
		default:
			for i := range out {
				out[i] = apply(k, x, b[i])
			}
		}
	default:
		for i := range out {
			out[i] = apply(k, a[i*as], b[i*bs])
		}
	}
}

// apply computes one element of a binary op.
func apply(k ir.OpKind, x, y float32) float32 {
	switch k {
	case ir.Add:
		return x + y
	case ir.Sub:
		return x - y
	case ir.Mul:
		return x * y
	case ir.Div:
		return x / y
	case ir.Maximum:
		return maximum(x, y)
	default: // ir.Minimum
		return minimum(x, y)
	}
}

// maximum is Maximum: NaN if either operand is NaN (as NumPy's maximum);
// of two zeros, +0 (as Go's math.Max and IEEE 754-2019's maximum), so
// Maximum(-0, +0) and Maximum(+0, -0) are both +0.
func maximum(x, y float32) float32 {
	switch {
	case x != x:
		return x
	case y != y:
		return y
	case x == 0 && y == 0:
		if math.Signbit(float64(x)) {
			return y
		}
		return x
	case x > y:
		return x
	}
	return y
}

// minimum is Minimum: NaN if either operand is NaN; of two zeros, -0.
func minimum(x, y float32) float32 {
	switch {
	case x != x:
		return x
	case y != y:
		return y
	case x == 0 && y == 0:
		if math.Signbit(float64(x)) {
			return x
		}
		return y
	case x < y:
		return x
	}
	return y
}

// unary runs an elementwise op of one float32 operand.
func (st *state) unary(o *ir.Op) error {
	a, err := st.float(o.Args[0])
	if err != nil {
		return err
	}
	if len(a) != tensor.NumElements(st.shapes[o.Dst.ID]) || !slices.Equal(st.shapes[o.Args[0].ID], st.shapes[o.Dst.ID]) {
		return st.shapeError(o)
	}
	out := st.dstFloat(o, true)
	a = a[:len(out)]
	switch o.Kind {
	case ir.Neg:
		for i, x := range a {
			out[i] = -x
		}
	case ir.Abs:
		for i, x := range a {
			out[i] = math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
		}
	case ir.Relu:
		for i, x := range a {
			if x > 0 || x != x {
				out[i] = x
			} else {
				out[i] = 0
			}
		}
	case ir.Tanh:
		for i, x := range a {
			out[i] = float32(math.Tanh(float64(x)))
		}
	case ir.Exp:
		for i, x := range a {
			out[i] = float32(math.Exp(float64(x)))
		}
	case ir.Log:
		for i, x := range a {
			out[i] = float32(math.Log(float64(x)))
		}
	case ir.Sigmoid:
		for i, x := range a {
			out[i] = float32(1 / (1 + math.Exp(-float64(x))))
		}
	case ir.Sqrt:
		for i, x := range a {
			out[i] = float32(math.Sqrt(float64(x)))
		}
	}
	return nil
}

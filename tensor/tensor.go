// Package tensor holds rxeq's dense, row-major tensors and the seeded input
// generators that every executor is fed from.
//
// A Tensor owns exactly one data slice, chosen by its DType: F32 for
// Float32, F64 for Float64 (the oracle's outputs) and I64 for Int64. The
// package is a leaf: it imports nothing else from rxeq.
package tensor

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// DType is the element type of a tensor.
type DType uint8

// The element types a tensor can hold.
const (
	Invalid DType = iota
	Float32
	Float64
	Int64
)

// String returns the Go spelling of the element type.
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int64:
		return "int64"
	}
	return "invalid"
}

// ErrInvalid is the kind of every error about a malformed tensor.
var ErrInvalid = errors.New("invalid tensor")

// Tensor is a dense row-major tensor on the host (device "cpu:0").
type Tensor struct {
	DType DType
	Shape []int
	F32   []float32
	F64   []float64
	I64   []int64
}

// MaxElements is the most elements a tensor may have: 2^60 - 1, so that
// its size in bytes at 8 bytes per element fits in int64. Eight is the
// widest element (float64, int64) and what the oracle holds every float
// tensor in, so one limit serves every dtype and every executor.
const MaxElements = math.MaxInt64 / 8

// NumElements returns the product of the dimensions of shape (1 for rank 0).
// It does not check for overflow: use it on shapes that Validate or
// CheckedNumElements accepted.
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// CheckedNumElements returns the product of the dimensions of shape (1 for
// rank 0) and true, or false when a dimension is negative or the product
// is more than MaxElements. A shape with a zero dimension has no elements,
// however large its other dimensions.
func CheckedNumElements(shape []int) (int, bool) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d == 0 {
			n = 0
		}
	}
	if n == 0 {
		return 0, true
	}
	for _, d := range shape {
		if n > MaxElements/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// NewFloat32 returns a zeroed float32 tensor of the given shape.
func NewFloat32(shape ...int) *Tensor {
	return &Tensor{DType: Float32, Shape: append([]int(nil), shape...), F32: make([]float32, NumElements(shape))}
}

// NewFloat64 returns a zeroed float64 tensor of the given shape.
func NewFloat64(shape ...int) *Tensor {
	return &Tensor{DType: Float64, Shape: append([]int(nil), shape...), F64: make([]float64, NumElements(shape))}
}

// NewInt64 returns a zeroed int64 tensor of the given shape.
func NewInt64(shape ...int) *Tensor {
	return &Tensor{DType: Int64, Shape: append([]int(nil), shape...), I64: make([]int64, NumElements(shape))}
}

// FromFloat32 wraps data (not copied) as a float32 tensor of the given shape.
func FromFloat32(data []float32, shape ...int) *Tensor {
	return &Tensor{DType: Float32, Shape: append([]int(nil), shape...), F32: data}
}

// FromFloat64 wraps data (not copied) as a float64 tensor of the given shape.
func FromFloat64(data []float64, shape ...int) *Tensor {
	return &Tensor{DType: Float64, Shape: append([]int(nil), shape...), F64: data}
}

// FromInt64 wraps data (not copied) as an int64 tensor of the given shape.
func FromInt64(data []int64, shape ...int) *Tensor {
	return &Tensor{DType: Int64, Shape: append([]int(nil), shape...), I64: data}
}

// Scalar returns a rank-0 int64 tensor holding v.
func Scalar(v int64) *Tensor { return FromInt64([]int64{v}) }

// Rank returns the number of dimensions.
func (t *Tensor) Rank() int { return len(t.Shape) }

// Len returns the number of elements the shape describes.
func (t *Tensor) Len() int { return NumElements(t.Shape) }

// Validate reports whether the tensor is well formed: a known dtype, no
// negative dimension, at most MaxElements elements, and exactly one data
// slice, of the length the shape says.
func (t *Tensor) Validate() error {
	if t == nil {
		return fmt.Errorf("%w: nil tensor", ErrInvalid)
	}
	for i, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("%w: dimension %d is negative (%d)", ErrInvalid, i, d)
		}
	}
	want, ok := CheckedNumElements(t.Shape)
	if !ok {
		return fmt.Errorf("%w: shape %v has more than %d elements (2^60 - 1), the most a tensor may hold", ErrInvalid, t.Shape, MaxElements)
	}
	var n int
	switch t.DType {
	case Float32:
		n = len(t.F32)
	case Float64:
		n = len(t.F64)
	case Int64:
		n = len(t.I64)
	default:
		return fmt.Errorf("%w: unknown dtype %d", ErrInvalid, t.DType)
	}
	if n != want {
		return fmt.Errorf("%w: shape %v needs %d elements, data has %d", ErrInvalid, t.Shape, want, n)
	}
	return nil
}

// Float64s returns the elements widened to float64 (a copy); int64 elements
// are converted. It is how the oracle widens float32 inputs.
func (t *Tensor) Float64s() []float64 {
	out := make([]float64, t.Len())
	switch t.DType {
	case Float32:
		for i, v := range t.F32 {
			out[i] = float64(v)
		}
	case Float64:
		copy(out, t.F64)
	case Int64:
		for i, v := range t.I64 {
			out[i] = float64(v)
		}
	}
	return out
}

// CloneMap returns a deep copy of a map of named tensors (a nil tensor
// stays nil): a run's own inputs, or outputs kept while an executor may
// reuse its buffers.
func CloneMap(m map[string]*Tensor) map[string]*Tensor {
	out := make(map[string]*Tensor, len(m))
	for name, t := range m {
		if t != nil {
			t = t.Clone()
		}
		out[name] = t
	}
	return out
}

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{DType: t.DType, Shape: append([]int(nil), t.Shape...)}
	if t.F32 != nil {
		c.F32 = append([]float32(nil), t.F32...)
	}
	if t.F64 != nil {
		c.F64 = append([]float64(nil), t.F64...)
	}
	if t.I64 != nil {
		c.I64 = append([]int64(nil), t.I64...)
	}
	return c
}

// Strides returns the row-major element strides of shape.
func Strides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

// Index converts a flat offset into a multi-dimensional index of shape.
func Index(shape []int, flat int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = flat % shape[i]
			flat /= shape[i]
		}
	}
	return idx
}

// FormatIndex prints a multi-dimensional index the way reports show it: [12 3].
func FormatIndex(idx []int) string {
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// String summarises the tensor: dtype, shape and up to eight elements.
func (t *Tensor) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%v{", t.DType, t.Shape)
	n := t.Len()
	for i := 0; i < n && i < 8; i++ {
		if i > 0 {
			b.WriteString(" ")
		}
		switch t.DType {
		case Float32:
			fmt.Fprint(&b, t.F32[i])
		case Float64:
			fmt.Fprint(&b, t.F64[i])
		case Int64:
			fmt.Fprint(&b, t.I64[i])
		}
	}
	if n > 8 {
		b.WriteString(" …")
	}
	b.WriteString("}")
	return b.String()
}

package native_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/tensor"
)

// The call path judges tensors with a check of its own that builds no
// error; it must agree with tensor.Validate on every tensor.
var _ = Describe("the call path's well-formedness check", func() {
	It("agrees with tensor.Validate on every shape, dtype and data length", func() {
		dims := []int{0, 1, 2, 3, 7, -1, math.MaxInt, math.MaxInt / 2, 1 << 31, 1 << 32, tensor.MaxElements, tensor.MaxElements + 1}
		var shapes [][]int
		shapes = append(shapes, nil, []int{})
		for _, a := range dims {
			shapes = append(shapes, []int{a})
			for _, b := range dims {
				shapes = append(shapes, []int{a, b})
				for _, c := range dims {
					shapes = append(shapes, []int{a, b, c})
				}
			}
		}
		shapes = append(shapes, []int{1, 2, 1, 3, 2}, []int{2, 2, 2, 2, 2, 2}, []int{1 << 20, 1 << 20, 1 << 20, 0}, []int{-1, 0})
		lens := []int{0, 1, 2, 3, 6, 7, 14, 21, 24, 64}
		checked := 0
		for _, shape := range shapes {
			for _, n := range lens {
				for _, t := range []*tensor.Tensor{
					{DType: tensor.Float32, Shape: shape, F32: make([]float32, n)},
					{DType: tensor.Int64, Shape: shape, I64: make([]int64, n)},
					{DType: tensor.Float64, Shape: shape, F64: make([]float64, n)},
					{DType: tensor.Float32, Shape: shape, I64: make([]int64, n)}, // data under the wrong dtype
					{DType: tensor.DType(9), Shape: shape, F32: make([]float32, n)},
				} {
					Expect(native.WellFormed(t)).To(Equal(t.Validate() == nil), "%s %v with %d elements: %v", t.DType, shape, n, t.Validate())
					checked++
				}
			}
		}
		Expect(checked).To(BeNumerically(">", 1000))
	})
})

//go:build cgo

package native_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
)

// Found by `rxeq fuzz` (seed 6): Argmax of a rank-1 tensor is an int64
// scalar, which the generator used to pass as a missing tensor slot
// (`rx_argmax(&rx_c, , x, 0)`), so the program did not compile.
var _ = Describe("Argmax into an int64 scalar", Label("native"), func() {
	It("compiles and follows the first-maximum, first-NaN rule", func() {
		_, p := parse("am.rx", `package p

func am(x [N]float32) (cls int64, twice int64) {
	cls = Argmax(x, 0)
	twice = cls + Argmax(x, -1)
	return
}
`)
		prog := compile(p)
		nan := float32(math.NaN())
		for _, tc := range []struct {
			x    []float32
			want int64
		}{
			{[]float32{1, 3, 3, 2}, 1},
			{[]float32{-1, -5}, 0},
			{[]float32{0, nan, 9, nan}, 1},
			{[]float32{7}, 0},
		} {
			out := run(prog, "am", map[string]*tensor.Tensor{"x": tensor.FromFloat32(tc.x, len(tc.x))})
			Expect(out["cls"].I64).To(Equal([]int64{tc.want}), "x=%v", tc.x)
			Expect(out["twice"].I64).To(Equal([]int64{2 * tc.want}), "x=%v", tc.x)
		}
	})
})

// Found by `rxeq fuzz` (seed 4): `k > k` compiled to C is a
// -Werror=tautological-compare error, so the program did not build.
var _ = Describe("comparing an integer with itself", Label("native"), func() {
	It("builds and gives Go's answers", func() {
		_, p := parse("self.rx", `package p

func self(x [N]float32, k int64) (y [N]float32, n int64) {
	y = x
	n = 0
	if k > k || k < k || k != k {
		y = -x
	}
	if k == k && k <= k && k >= k {
		n = 1
	}
	return
}
`)
		prog := compile(p)
		out := run(prog, "self", map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{2}, 1), "k": tensor.Scalar(5)})
		Expect(out["y"].F32).To(Equal([]float32{2}))
		Expect(out["n"].I64).To(Equal([]int64{1}))
	})
})

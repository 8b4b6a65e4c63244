//go:build cgo

package native_test

import (
	"context"
	"math"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/tensor"
)

// The row kernels along the last axis (Argmax, Softmax, LogSoftmax) have a
// vectorised path with a branch-free maximum; these rows exercise its
// edges: ties, -0 and +0, NaN first, last and in between, ±Inf, lengths
// around the vector width.
var _ = Describe("row kernels along the last axis", Label("native"), func() {
	It("follow the Argmax rule and match the fallback's Softmax and LogSoftmax bit for bit", func() {
		_, p := parse("rows.rx", `package p

func rows(x [B][N]float32) (cls [B]int64, sm [B][N]float32, lsm [B][N]float32) {
	cls = Argmax(x, 1)
	sm = Softmax(x, 1)
	lsm = LogSoftmax(x, 1)
	return
}
`)
		prog := compile(p)
		it, err := fallback.New(p.Func("rows"))
		Expect(err).NotTo(HaveOccurred())
		rng := rand.New(rand.NewPCG(11, 12))
		nan, inf := float32(math.NaN()), float32(math.Inf(1))
		negz := float32(math.Copysign(0, -1))
		pool := []float32{0, negz, 1, 1, -1, 2.5, 2.5, inf, -inf, nan, 3e38, -3e38, 1e-45}
		for i, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 64, 65, 70} {
			rowsN := []int{64, 7, 5}[i%3] // Softmax sums rows four at a time, then the rest
			x := make([]float32, rowsN*n)
			for i := range x {
				if rng.IntN(3) == 0 {
					x[i] = pool[rng.IntN(len(pool))]
				} else {
					x[i] = float32(rng.IntN(7) - 3) // many ties
				}
			}
			in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, rowsN, n)}
			got := run(prog, "rows", in)
			want, err := it.Run(context.Background(), in)
			Expect(err).NotTo(HaveOccurred())
			for r := 0; r < rowsN; r++ {
				row := x[r*n : (r+1)*n]
				best, hasNaN := 0, false
				for k, v := range row {
					if v != v {
						best, hasNaN = k, true
						break
					}
					if v > row[best] {
						best = k
					}
				}
				Expect(got["cls"].I64[r]).To(Equal(int64(best)), "n=%d row=%v", n, row)
				if hasNaN {
					continue // the fallback's Softmax max does not propagate NaN
				}
				for k := range row {
					i := r*n + k
					for _, name := range []string{"sm", "lsm"} {
						g, w := got[name].F32[i], want[name].F32[i]
						Expect(math.Float32bits(g) == math.Float32bits(w) || (g != g && w != w)).To(BeTrue(),
							"%s n=%d row=%v k=%d: native %v fallback %v", name, n, row, k, g, w)
					}
				}
			}
		}
	})
})

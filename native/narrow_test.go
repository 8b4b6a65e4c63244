//go:build cgo

package native_test

import (
	"math"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
)

// maxf is the runtime's NaN-propagating maximum (rx_maxf): the first NaN
// wins, and of two zeros +0 unless both are -0.
func maxf(a, b float32) float32 {
	switch {
	case a != a:
		return a
	case b != b:
		return b
	case a == 0 && b == 0:
		if math.Signbit(float64(a)) {
			return b
		}
		return a
	case a > b:
		return a
	}
	return b
}

// softmaxRow is Softmax of one row as the runtime documents it: m the
// rx_maxf fold from x[0], e_k = exp(x_k - m) (the difference in float32, exp
// in float64 rounded once), s = e_0 + e_1 + … from 0 in float32, e_k / s.
func softmaxRow(x []float32) []float32 {
	m := x[0]
	for _, v := range x[1:] {
		m = maxf(m, v)
	}
	out := make([]float32, len(x))
	var s float32
	for k, v := range x {
		out[k] = float32(math.Exp(float64(v - m)))
		s += out[k]
	}
	for k := range out {
		out[k] /= s
	}
	return out
}

// argmaxRow is Argmax's rule: the first NaN, else the first maximum.
func argmaxRow(x []float32) int64 {
	best := 0
	for k, v := range x {
		if v != v {
			return int64(k)
		}
		if v > x[best] {
			best = k
		}
	}
	return int64(best)
}

// narrowRows is the program of the narrow-row specs: Argmax and Softmax
// along the last axis of rows of any width.
const narrowRows = `package p

func rows(x [B][N]float32) (cls [B]int64, sm [B][N]float32) {
	cls = Argmax(x, 1)
	sm = Softmax(x, 1)
	return
}
`

// Softmax and Argmax along the last axis of rows of 8 take two rows to a
// vector on AVX-512; an odd last row, and other widths, take the
// row-by-row path. Both give the documented result bit for bit.
var _ = Describe("narrow rows of Softmax and Argmax", Label("native"), func() {
	It("give the documented result bit for bit for every width up to 17 and row count on every ISA", func() {
		_, p := parse("narrow.rx", narrowRows)
		nan, inf := float32(math.NaN()), float32(math.Inf(1))
		negz := float32(math.Copysign(0, -1))
		pool := []float32{0, negz, 1, 1, -1, 2.5, 2.5, inf, -inf, nan, 3e38, -3e38, 1e-45, -1e-45,
			1e-38, 88.7, -103, 200, -200}
		forEachISA(func(isa string) {
			prog := compileISA(p, isa)
			defer prog.Close()
			rng := rand.New(rand.NewPCG(21, 22))
			for n := 1; n <= 17; n++ {
				for _, rows := range []int{0, 1, 3, 15, 16, 17, 33, 4097} {
					x := make([]float32, rows*n)
					for i := range x {
						switch rng.IntN(8) {
						case 0, 1:
							x[i] = pool[rng.IntN(len(pool))]
						case 2:
							x[i] = float32(rng.NormFloat64() * 30)
						default:
							x[i] = float32(rng.IntN(7) - 3) // many ties
						}
					}
					// Rows of one kind, so that whole blocks hold none or all of them.
					for r := 0; r < rows; r++ {
						row := x[r*n : (r+1)*n]
						switch r % 7 {
						case 1: // all zeros of both signs
							for k := range row {
								row[k] = []float32{0, negz}[rng.IntN(2)]
							}
						case 2: // all -0
							for k := range row {
								row[k] = negz
							}
						case 3: // no NaN
							for k := range row {
								if row[k] != row[k] {
									row[k] = 1
								}
							}
						}
					}
					in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, rows, n)}
					got := run(prog, "rows", in)
					for r := 0; r < rows; r++ {
						row := x[r*n : (r+1)*n]
						Expect(got["cls"].I64[r]).To(Equal(argmaxRow(row)),
							"%s n=%d rows=%d r=%d row=%v", isa, n, rows, r, row)
						want := softmaxRow(row)
						for k := range row {
							g, w := got["sm"].F32[r*n+k], want[k]
							Expect(math.Float32bits(g) == math.Float32bits(w) || (g != g && w != w)).To(BeTrue(),
								"%s n=%d rows=%d r=%d row=%v k=%d: native %v want %v", isa, n, rows, r, row, k, g, w)
						}
					}
				}
			}
		})
	})

	It("give the row-by-row path's bits, NaN payloads too, on every ISA", func() {
		_, p := parse("narrow.rx", narrowRows)
		negz := float32(math.Copysign(0, -1))
		pool := []float32{0, negz, 1, 2.5, float32(math.Inf(1)), float32(math.Inf(-1)), 3e38, -1e-45,
			math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc12345),
			math.Float32frombits(0x7fc00abc), math.Float32frombits(0x7f800001)}
		forEachISA(func(isa string) {
			prog := compileISA(p, isa)
			defer prog.Close()
			rng := rand.New(rand.NewPCG(31, 32))
			for n := 1; n <= 17; n++ {
				for it := range 400 {
					// Rows 0 and 1 (a pair of the narrow path), then row
					// it%2 again: the rest, which takes the row-by-row path.
					x := make([]float32, 3*n)
					for i := range x[:2*n] {
						if rng.IntN(3) == 0 {
							x[i] = pool[rng.IntN(len(pool))]
						} else {
							x[i] = float32(rng.IntN(5) - 2)
						}
					}
					r := it % 2
					copy(x[2*n:], x[r*n:(r+1)*n])
					got := run(prog, "rows", map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, 3, n)})
					row := x[r*n : (r+1)*n]
					Expect(got["cls"].I64[2]).To(Equal(got["cls"].I64[r]), "%s n=%d row=%v", isa, n, row)
					for k := range n {
						g, w := got["sm"].F32[r*n+k], got["sm"].F32[2*n+k]
						Expect(math.Float32bits(g)).To(Equal(math.Float32bits(w)),
							"%s n=%d row=%v k=%d: pair %v rest %v", isa, n, row, k, g, w)
					}
				}
			}
		})
	})
})

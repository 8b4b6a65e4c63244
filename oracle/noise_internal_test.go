package oracle

import (
	"math"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// representable reports whether x is exactly a float32 value.
func representable(x float64) bool { return float64(float32(x)) == x || math.IsNaN(x) }

var _ = Describe("stochastic rounding to float32", func() {
	var n *noise
	BeforeEach(func() { n = &noise{r: rand.New(rand.NewPCG(7, 11))} })

	It("returns a float32 neighbour of x: no float32 value lies strictly between the result and x", func() {
		src := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			// Magnitudes from 1e-44 (subnormal float32) to 1e38, both signs.
			x := math.Pow(10, -44+82*src.Float64())
			if src.IntN(2) == 0 {
				x = -x
			}
			r := n.round(x)
			Expect(representable(r)).To(BeTrue(), "x=%g r=%g", x, r)
			Expect(math.Signbit(r)).To(Equal(math.Signbit(x)), "x=%g r=%g", x, r)
			if r == x {
				continue
			}
			// The next float32 from r towards x is x itself or beyond it.
			next := float64(math.Nextafter32(float32(r), float32(math.Copysign(math.Inf(1), x-r))))
			if r < x {
				Expect(next).To(BeNumerically(">=", x), "x=%g r=%g", x, r)
			} else {
				Expect(next).To(BeNumerically("<=", x), "x=%g r=%g", x, r)
			}
		}
	})

	It("leaves float32 values, NaN, ±Inf and ±0 unchanged", func() {
		for _, x := range []float64{1, -1, 0.5, 3, 1 + 0x1p-23, math.MaxFloat32, -math.MaxFloat32,
			math.SmallestNonzeroFloat32, 0x1p-126, float64(float32(0.1)), math.Inf(1), math.Inf(-1)} {
			for range 100 {
				Expect(n.round(x)).To(Equal(x))
			}
		}
		Expect(math.IsNaN(n.round(math.NaN()))).To(BeTrue())
		z := n.round(0)
		Expect(z).To(Equal(0.0))
		Expect(math.Signbit(z)).To(BeFalse())
		nz := n.round(math.Copysign(0, -1))
		Expect(nz).To(Equal(0.0))
		Expect(math.Signbit(nz)).To(BeTrue())
	})

	It("underflows far below the smallest subnormal to a zero of the same sign", func() {
		for range 1000 {
			p := n.round(1e-50)
			Expect(p).To(Equal(0.0))
			Expect(math.Signbit(p)).To(BeFalse())
			m := n.round(-1e-50)
			Expect(math.Signbit(m)).To(BeTrue())
			Expect(m).To(Or(Equal(0.0), Equal(-math.SmallestNonzeroFloat32)))
		}
	})

	It("is unbiased: a quarter ulp above 1 rounds up a quarter of the time", func() {
		// 1+2^-25 lies between lo = 1 and hi = 1+2^-23 (the float32 ulp of 1
		// is 2^-23), a quarter of the way up: P(hi) = 0.25, and the mean of
		// the draws is 1 + 0.25*2^-23 = 1+2^-25. With 100k draws the standard
		// error of the fraction is sqrt(0.25*0.75/1e5) = 1.37e-3.
		const draws = 100000
		x := 1 + 0x1p-25
		up, excess := 0, 0.0 // excess sums r-1, exactly (multiples of 2^-23)
		for range draws {
			r := n.round(x)
			Expect(r).To(Or(Equal(1.0), Equal(1+0x1p-23)))
			if r > 1 {
				up++
			}
			excess += r - 1
		}
		se := math.Sqrt(0.25 * 0.75 / draws)
		Expect(float64(up) / draws).To(BeNumerically("~", 0.25, 5*se))
		Expect(1 + excess/draws).To(BeNumerically("~", x, 5*se*0x1p-23))
	})

	It("rounds between subnormals with the right odds", func() {
		// 1.5 smallest subnormals: 1 or 2 of them, half the time each.
		s := math.SmallestNonzeroFloat32
		up := 0
		for range 10000 {
			r := n.round(1.5 * s)
			Expect(r).To(Or(Equal(s), Equal(2*s)))
			if r == 2*s {
				up++
			}
		}
		Expect(float64(up) / 10000).To(BeNumerically("~", 0.5, 5*math.Sqrt(0.25/10000)))
	})

	It("overflows to ±Inf beyond the float32 rounding threshold and sometimes just past MaxFloat32", func() {
		for range 100 {
			Expect(n.round(1e39)).To(Equal(math.Inf(1)))
			Expect(n.round(-1e39)).To(Equal(math.Inf(-1)))
			Expect(n.round(math.MaxFloat64)).To(Equal(math.Inf(1)))
		}
		// MaxFloat32 = 2^128 - 2^104 and the float32 spacing there is 2^104.
		// A quarter step above it float32() rounds down to MaxFloat32 (the
		// threshold is half a step), and stochastic rounding goes up, to
		// +Inf, a quarter of the time.
		x := math.MaxFloat32 + 0x1p102
		Expect(float64(float32(x))).To(Equal(math.MaxFloat32))
		up := 0
		for range 10000 {
			r := n.round(x)
			Expect(r).To(Or(Equal(math.MaxFloat32), Equal(math.Inf(1))))
			if math.IsInf(r, 1) {
				up++
			}
			Expect(n.round(-x)).To(Or(Equal(-math.MaxFloat32), Equal(math.Inf(-1))))
		}
		Expect(float64(up) / 10000).To(BeNumerically("~", 0.25, 5*math.Sqrt(0.25*0.75/10000)))
	})
})

package oracle_test

import (
	"context"
	"math"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// noisy runs fn once under stochastic rounding seeded by seed.
func noisy(fn *program.Func, in map[string]*tensor.Tensor, seed uint64) map[string]*tensor.Tensor {
	out, err := oracle.RunWith(context.Background(), fn, in, oracle.Options{Noise: rand.New(rand.NewPCG(seed, 99))})
	Expect(err).NotTo(HaveOccurred())
	return out
}

func exact(fn *program.Func, in map[string]*tensor.Tensor) map[string]*tensor.Tensor {
	out, err := oracle.Run(context.Background(), fn, in)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// bits returns the IEEE bit patterns of xs, so that Equal compares NaNs
// and signed zeros exactly.
func bits(xs []float64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = math.Float64bits(x)
	}
	return out
}

// rows repeats one row n times into a float32 [n][len(row)] tensor.
func rows(n int, row ...float32) *tensor.Tensor {
	data := make([]float32, 0, n*len(row))
	for range n {
		data = append(data, row...)
	}
	return tensor.FromFloat32(data, n, len(row))
}

var _ = Describe("noise runs (RunWith with Options.Noise)", func() {
	design := func() *program.Func { return parseFunc(designSource, "score_linear") }

	It("are the exact run, bit for bit, with the zero Options", func() {
		fn, in := design(), designInputs(16)
		want := exact(fn, in)
		got, err := oracle.RunWith(context.Background(), fn, in, oracle.Options{})
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"logits", "probs"} {
			Expect(bits(got[name].F64)).To(Equal(bits(want[name].F64)), name)
		}
		Expect(got["classes"].I64).To(Equal(want["classes"].I64))
	})

	It("are deterministic for a seed, differ between seeds and hold float32 values", func() {
		fn, in := design(), designInputs(16)
		a, b, c := noisy(fn, in, 1), noisy(fn, in, 1), noisy(fn, in, 2)
		for _, name := range []string{"logits", "probs"} {
			Expect(bits(a[name].F64)).To(Equal(bits(b[name].F64)), name)
			Expect(bits(a[name].F64)).NotTo(Equal(bits(c[name].F64)), name)
			for _, x := range a[name].F64 {
				Expect(float64(float32(x))).To(Equal(x))
			}
		}
		Expect(a["classes"].I64).To(Equal(b["classes"].I64))
	})

	It("stay close to the exact run on the well-conditioned DESIGN example", func() {
		// Each logit is a 32-term dot product of N(0,1) by N(0,0.3) values
		// (partial sums of magnitude a few units, float32 ulp <= 4.8e-7, so
		// at most ~32*4.8e-7 = 1.5e-5 of rounding), then contractions (*0.5,
		// Tanh). Probabilities of a Softmax of logits in (-1, 1) move by
		// about as much.
		fn, in := design(), designInputs(64)
		want := exact(fn, in)
		for seed := range uint64(4) {
			got := noisy(fn, in, seed)
			for i, x := range want["logits"].F64 {
				Expect(got["logits"].F64[i]).To(BeNumerically("~", x, 2e-5))
				Expect(got["probs"].F64[i]).To(BeNumerically("~", want["probs"].F64[i], 2e-5))
			}
		}
	})

	It("round to the nearest float32 with Options.Nearest, deterministically", func() {
		// The same LogSoftmax row as below: to nearest, 1 + 1.166e-8 is 1
		// (below half an ulp of 1, 5.96e-8), so the output is exactly 0,
		// where float64 says -1.166e-4 and a float32 executor says 0.
		fn := parseFunc(`package p

func f(x [B][2]float32) (y [B][2]float32) {
	y = LogSoftmax(x, 1) * 10000.0
	return
}
`, "f")
		in := map[string]*tensor.Tensor{"x": rows(3, 0, -18.27)}
		a, err := oracle.RunWith(context.Background(), fn, in, oracle.Options{Nearest: true})
		Expect(err).NotTo(HaveOccurred())
		b, err := oracle.RunWith(context.Background(), fn, in, oracle.Options{Nearest: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(bits(a["y"].F64)).To(Equal(bits(b["y"].F64)))
		for r := range 3 {
			Expect(a["y"].F64[2*r]).To(Equal(0.0))
		}
		Expect(exact(fn, in)["y"].F64[0]).To(BeNumerically("<", -1e-4))
	})

	It("show the sensitivity of LogSoftmax to a log(1+tiny)", func() {
		// Row [0, -18.27]: the exact first output is
		// -1e4*log(1+exp(-18.27)) = -1e4*1.166e-8 = -1.166e-4. In float32 the
		// sum 1+1.166e-8 is 1 or 1+2^-23 (ulp of 1 is 2^-23 = 1.19e-7); it
		// rounds up with probability 1.166e-8/1.19e-7 = 0.098, and the output
		// is then -1e4*log(1+2^-23) = -1.19e-3, else 0. So every sample is at
		// least 1.166e-4 away from the exact value (relative error >= 1), the
		// spread is 1.19e-3, and the mean stays the exact value (the standard
		// deviation of one sample is sqrt(0.098*0.902)*1.19e-3 = 3.5e-4).
		fn := parseFunc(`package p

func f(x [B][2]float32) (y [B][2]float32) {
	y = LogSoftmax(x, 1) * 10000.0
	return
}
`, "f")
		const n = 1000
		in := map[string]*tensor.Tensor{"x": rows(n, 0, -18.27)}
		tiny := math.Exp(float64(float32(-18.27)))
		want := -1e4 * math.Log1p(tiny)
		Expect(exact(fn, in)["y"].F64[0]).To(BeNumerically("~", want, 1e-12))
		up := -1e4 * math.Log1p(0x1p-23)
		var sum float64
		seen := map[bool]int{}
		for seed := range uint64(4) {
			y := noisy(fn, in, seed)["y"].F64
			for r := range n {
				v := y[2*r]
				Expect(math.Abs(v - want)).To(BeNumerically(">=", 1e-4))
				Expect(v).To(Or(Equal(0.0), BeNumerically("~", up, 1e-9)))
				seen[v == 0]++
				sum += v
			}
		}
		Expect(seen[true]).To(BeNumerically(">", 0))
		Expect(seen[false]).To(BeNumerically(">", 0))
		se := 3.5e-4 / math.Sqrt(4*n)
		Expect(sum / (4 * n)).To(BeNumerically("~", want, 5*se))
	})

	It("stay within a few float32 ulps on a well-conditioned elementwise program", func() {
		// Tanh rounds once (error < 1 ulp, 1.2e-7 relative), *0.5 is exact,
		// +1 rounds once (< 1 ulp of a value in [0.5, 1.5], 1.2e-7 of 1): the
		// relative error of y is below 1e-6.
		fn := parseFunc(`package p

func f(x [B][8]float32) (y [B][8]float32) {
	y = Tanh(x) * 0.5 + 1.0
	return
}
`, "f")
		in := map[string]*tensor.Tensor{"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 2}, 5, 32, 8)}
		want := exact(fn, in)["y"].F64
		moved := false
		for seed := range uint64(8) {
			got := noisy(fn, in, seed)["y"].F64
			for i, x := range want {
				Expect(math.Abs(got[i]-x) / math.Abs(x)).To(BeNumerically("<", 1e-6))
				moved = moved || got[i] != x
			}
		}
		Expect(moved).To(BeTrue())
	})

	It("underflow tiny*tiny to 0 as float32 does, so 0*-Inf becomes NaN", func() {
		// x = 1e-30 is a normal float32; x*x = 1e-60 is far below the
		// smallest float32 subnormal (1.4e-45), so it rounds to 0 (to the
		// subnormal with probability 1e-60/1.4e-45 = 7e-16). Exactly, y = 1e-60
		// and z = 1e-60 * Log(0) = -Inf; with underflow z = 0 * -Inf = NaN.
		fn := parseFunc(`package p

func f(x [B]float32, w [B]float32) (y [B]float32, z [B]float32) {
	y = x * x
	z = (x * x) * Log(w)
	return
}
`, "f")
		in := map[string]*tensor.Tensor{
			"x": tensor.FromFloat32([]float32{1e-30, 1e-30}, 2),
			"w": tensor.FromFloat32([]float32{0, 0}, 2),
		}
		ex := exact(fn, in)
		x := float64(float32(1e-30))
		Expect(ex["y"].F64).To(Equal([]float64{x * x, x * x}))
		Expect(ex["z"].F64).To(Equal([]float64{math.Inf(-1), math.Inf(-1)}))
		for seed := range uint64(8) {
			out := noisy(fn, in, seed)
			Expect(bits(out["y"].F64)).To(Equal(bits([]float64{0, 0})))
			for _, z := range out["z"].F64 {
				Expect(math.IsNaN(z)).To(BeTrue())
			}
		}
	})

	It("show cancellation inside MatMul", func() {
		// [1e4, 0.3, -1e4] . [1, 1, 1]: the exact result is float32(0.3) =
		// 0.30000001192. In float32 the partial sum 1e4+0.3 lands on the grid
		// of spacing 2^-10 = 9.8e-4 around 1e4: 10000.2998046875 or
		// 10000.30078125 (the latter with probability 0.201), and subtracting
		// 1e4 is exact. So every sample is 0.2998046875 or 0.30078125, at least
		// 1.95e-4 from the exact value. ([1e4, 1, -1e4] would not do: 10001 is
		// a float32 value and the result is exactly 1.)
		fn := parseFunc(`package p

func f(a [B][3]float32, b [3][1]float32) (y [B][1]float32) {
	y = MatMul(a, b)
	return
}
`, "f")
		const n = 64
		in := map[string]*tensor.Tensor{
			"a": rows(n, 1e4, 0.3, -1e4),
			"b": tensor.FromFloat32([]float32{1, 1, 1}, 3, 1),
		}
		want := float64(float32(0.3))
		Expect(exact(fn, in)["y"].F64[0]).To(Equal(want))
		y := noisy(fn, in, 3)["y"].F64
		seen := map[float64]int{}
		for _, v := range y {
			Expect(v).To(Or(Equal(0.2998046875), Equal(0.30078125)))
			Expect(math.Abs(v - want)).To(BeNumerically(">", 1.9e-4))
			seen[v]++
		}
		Expect(seen).To(HaveLen(2)) // P(one value 64 times) < 1e-6
	})

	It("round Sum, Mean and Softmax partial results", func() {
		// Sum of [1, 2^-24, 2^-24, 2^-24, 2^-24] is 1+2^-22 exactly; in
		// float32 a partial sum that falls between grid points 2^-23 apart
		// rounds to one of them (each of the four additions of 2^-24 moves
		// the sum by 0 or 2^-23), so samples are 1+k*2^-23 for k = 0..4. Mean divides by 5 and rounds once more. Softmax of equal
		// logits is exactly 1/5 per entry; in float32 the exps and the partial
		// sums 1..5 are exact and the quotient 1/5 rounds to one of its two
		// float32 neighbours, float32(0.2) = 0.2+3e-9 and the one below it.
		fn := parseFunc(`package p

func f(x [B][5]float32) (s [B]float32, m [B]float32, p [B][5]float32) {
	s = Sum(x, 1)
	m = Mean(x, 1)
	p = Softmax(x * 0.0, 1)
	return
}
`, "f")
		const n = 200
		e := float32(0x1p-24)
		in := map[string]*tensor.Tensor{"x": rows(n, 1, e, e, e, e)}
		ex := exact(fn, in)
		Expect(ex["s"].F64[0]).To(Equal(1 + 0x1p-22))
		Expect(ex["p"].F64[0]).To(Equal(0.2))
		out := noisy(fn, in, 4)
		var sum float64
		for r := range n {
			s := out["s"].F64[r]
			Expect(s).To(BeElementOf(1.0, 1+0x1p-23, 1+2*0x1p-23, 1+3*0x1p-23, 1+4*0x1p-23))
			sum += s
			Expect(out["m"].F64[r]).To(BeNumerically("~", s/5, 0x1p-23))
			for _, p := range out["p"].F64[5*r : 5*r+5] {
				Expect(p).To(BeElementOf(float64(float32(0.2)), float64(math.Nextafter32(0.2, 0))))
			}
		}
		// Unbiased: the mean of the sums is 1+2^-22 (a sample's s.d. is at
		// most 2^-22, so the standard error is below 2^-22/sqrt(200)).
		Expect(sum / n).To(BeNumerically("~", 1+0x1p-22, 5*0x1p-22/math.Sqrt(n)))
	})
})

package native_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
)

// The transcendentals' tails at every ISA against values worked out with
// 50-digit decimal arithmetic (Python's decimal module), as the
// fallback's spec has them: subnormal results of Exp and Sigmoid (not 0),
// Tanh on both sides of its saturation at 9.01, Log and Sqrt of
// subnormals.
var _ = Describe("the transcendentals' saturation and underflow ranges", func() {
	sub := func(k uint32) float32 { return math.Float32frombits(k) } // k * 2^-149
	const src = `package p

func f(x [N]float32, p [M]float32) (e [N]float32, s [N]float32, t [N]float32, l [M]float32, r [M]float32) {
	e = Exp(x)
	s = Sigmoid(x)
	t = Tanh(x)
	l = Log(p)
	r = Sqrt(p)
	return
}
`
	x := []float32{-100, -90, -103, 8.5, 9.1, -9.1}
	p := []float32{sub(1), sub(2)}
	// e^-100 = 26.547, e^-90 = 584744.28, e^-103 = 1.32 (× 2^-149), and
	// Sigmoid the same to 40 digits; 1 - tanh(8.5) = 8.28e-8 (nearer
	// 2^-24), 1 - tanh(9.1) = 2.49e-8 (below the midpoint 2^-25);
	// ln(2^-149) = -103.2789299; sqrt(2^-148) = 2^-74.
	wantE := []float32{sub(27), sub(584744), sub(1)}
	wantT := []float32{1 - 1.0/(1<<24), 1, -1}
	wantL := []float32{-103.27893}

	DescribeTable("round the exact value once at every ISA",
		func(isa string) {
			_, prog := parse("tails.rx", src)
			out := run(compileISA(prog, isa), "f", map[string]*tensor.Tensor{"x": f32(sh(len(x)), x...), "p": f32(sh(len(p)), p...)})
			Expect(out["e"].F32[:3]).To(Equal(wantE), "Exp")
			Expect(out["s"].F32[:3]).To(Equal(wantE), "Sigmoid: subnormals, not 0")
			Expect(out["t"].F32[3:]).To(Equal(wantT), "Tanh")
			Expect(out["l"].F32[0]).To(Equal(wantL[0]), "Log of 2^-149")
			Expect(out["r"].F32[1]).To(Equal(float32(math.Ldexp(1, -74))), "Sqrt of 2^-148")
		},
		Entry("the widest", ""),
		Entry("avx2", "avx2"),
		Entry("sse2", "sse2"),
		Entry("plain C", "c"),
	)
})

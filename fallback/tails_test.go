package fallback_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir"
)

// The transcendentals' tails against values worked out with 50-digit
// decimal arithmetic (Python's decimal module), not with Go's math: the
// exact value, then the float32 it rounds to. Subnormals are counted in
// units of 2^-149, the smallest one.
var _ = Describe("the transcendentals' saturation and underflow ranges", func() {
	sub := func(k uint32) float32 { return math.Float32frombits(k) } // k * 2^-149
	DescribeTable("round the exact value once, subnormal results included",
		func(k ir.OpKind, x float32, want float32) {
			out, err := run(unaryFn(k, 1), inputs{"x": f32([]float32{x}, 1)})
			Expect(err).NotTo(HaveOccurred())
			Expect(math.Float32bits(out["y"].F32[0])).To(Equal(math.Float32bits(want)), "%s(%v) = %v, want %v", k, x, out["y"].F32[0], want)
		},
		// e^-100 = 3.72007597602083596e-44 = 26.547 × 2^-149.
		Entry("Exp(-100), a subnormal", ir.Exp, float32(-100), sub(27)),
		// e^-90 = 8.19401262399051543e-40 = 584744.28 × 2^-149.
		Entry("Exp(-90), a subnormal", ir.Exp, float32(-90), sub(584744)),
		// e^-103 = 1.32 × 2^-149.
		Entry("Exp(-103), the smallest subnormal", ir.Exp, float32(-103), sub(1)),
		// Sigmoid(x) = e^x/(1+e^x): the same multiples of 2^-149 to 40 digits.
		Entry("Sigmoid(-100), a subnormal, not 0", ir.Sigmoid, float32(-100), sub(27)),
		Entry("Sigmoid(-90), a subnormal, not 0", ir.Sigmoid, float32(-90), sub(584744)),
		Entry("Sigmoid(-103), the smallest subnormal", ir.Sigmoid, float32(-103), sub(1)),
		// 1 - tanh(8.5) = 8.28e-8, nearer to 2^-24 (5.96e-8) than to 2^-23.
		Entry("Tanh(8.5), below 1", ir.Tanh, float32(8.5), float32(1-1.0/(1<<24))),
		// 1 - tanh(9.1) = 2.49e-8, below the midpoint 2^-25 (2.98e-8).
		Entry("Tanh(9.1), saturated", ir.Tanh, float32(9.1), float32(1)),
		Entry("Tanh(-9.1), saturated", ir.Tanh, float32(-9.1), float32(-1)),
		// ln(2^-149) = -103.278929903431851103.
		Entry("Log of the smallest subnormal", ir.Log, sub(1), float32(-103.27893)),
		// sqrt(2^-148) = 2^-74 exactly.
		Entry("Sqrt of a subnormal", ir.Sqrt, sub(2), float32(math.Ldexp(1, -74))),
	)
})

package ort_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("ReduceSum and the address of its input", func() {
	// Found by rxeq fuzz's metamorphic variants (seeds 31 and 59): the
	// variant and the original gave other last bits of one ReduceSum. The
	// Loop of the variant is not why: ONNX Runtime's ReduceSum of the same
	// values depends on where they are in memory (their address modulo
	// 16 bytes, its SIMD lanes), and rxeq passes its tensors in place.
	It("gives other last bits for the same six values at other addresses, at both levels", func() {
		needLibrary()
		src := `//rx:scenario fuzz-59
//rx:batches 1
//rx:seed 59
//rx:input b2 edge(tiny)
package fuzz

const K = 6

func f2(b2 [K]float32) (out0 float32) {
	out0 = Sum(b2, 0)
	return out0
}
`
		f, err := program.ParseScenario("fuzz-59.rx", []byte(src))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		in, err := harness.GenerateInputs(f, f.Func("f2"), 1, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range both() {
			pr, err := e.Prepare(context.Background(), f, p)
			Expect(err).NotTo(HaveOccurred())
			seen := map[uint32]bool{}
			// One buffer, the six values at four offsets of 4 bytes: four
			// addresses modulo 16.
			buf := make([]float32, 6+3)
			for off := range 4 {
				clear(buf)
				copy(buf[off:], in["b2"].F32)
				r, err := pr.Run(context.Background(), "f2", map[string]*tensor.Tensor{"b2": tensor.FromFloat32(buf[off:off+6], 6)})
				Expect(err).NotTo(HaveOccurred())
				seen[math.Float32bits(r.Outputs["out0"].F32[0])] = true
			}
			Expect(len(seen)).To(BeNumerically(">", 1), string(e.Name()))
			Expect(pr.Close()).To(Succeed())
		}
	})
})

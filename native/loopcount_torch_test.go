//go:build cgo

package native_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("a local loop count the body assigns", func() {
	It("is read once in the C of a .rx program, by the native and the torch runtimes", func() {
		f, err := program.Parse("t.rx", []byte(irtest.CountAssignedSource))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		src, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(src)).To(MatchRegexp(`rx_n0 = n;\n\s*for \(int64_t \w+ = 0; \w+ < rx_n0; \w+\+\+\) \{`))
		Expect(string(src)).To(MatchRegexp(`rx_n1 = m;\n\s*for \(int64_t \w+ = 0; \w+ < rx_n1; \w+\+\+\) \{`))
		nat, torch := compile(p), compileTorch(p)
		for _, k := range []int64{3, -1, -2, -9} {
			in := map[string]*tensor.Tensor{"x": f32(sh(2), 0.5, -1), "k": tensor.Scalar(k)}
			trips, after, added := irtest.CountAssignedWant(k)
			outs := map[string]map[string]*tensor.Tensor{"native": run(nat, "f", in), "torch": runTorch(torch, "f", in)}
			for name, out := range outs {
				Expect(out["trips"].I64).To(Equal([]int64{trips}), "%s, k = %d", name, k)
				Expect(out["after"].I64).To(Equal([]int64{after}), "%s, k = %d", name, k)
				Expect(out["y"].F32).To(Equal([]float32{0.5 + added, -1 + added}), "%s, k = %d", name, k)
			}
		}
	})
})

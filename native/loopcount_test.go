package native_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("a loop count the body assigns", func() {
	It("is copied before the loop in the generated C, so the loop's condition never reads the variable", func() {
		src, err := native.Generate(irtest.CountAssignedInBody())
		Expect(err).NotTo(HaveOccurred())
		s := string(src)
		Expect(s).To(MatchRegexp(`rx_n0 = count[^;]*;\n\s*for \(int64_t i = 0; i < rx_n0; i\+\+\) \{`))
		Expect(strings.Count(s, "< count")).To(BeZero())
	})

	DescribeTable("runs max(n, 0) iterations natively, as the fallback does",
		func(n int64) {
			p := irtest.CountAssignedInBody()
			prog := compile(p)
			in := map[string]*tensor.Tensor{"n": tensor.Scalar(n), "x": f32(sh(3), 0.5, -2, 7)}
			out := run(prog, "f", in)
			k := max(n, 0)
			Expect(out["iters"].I64).To(Equal([]int64{k}))
			Expect(out["y"].F32).To(Equal([]float32{0.5 + float32(k), -2 + float32(k), 7 + float32(k)}))
			fb, err := fallbackRun(p, "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(fb["iters"].I64).To(Equal(out["iters"].I64))
			Expect(fb["y"].F32).To(Equal(out["y"].F32))
		},
		Entry("n = 4", int64(4)),
		Entry("n = 1", int64(1)),
		Entry("n = 0", int64(0)),
		Entry("n = -3", int64(-3)),
	)
})

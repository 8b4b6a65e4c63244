package harness_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// Issue 15 item 5: a mismatch says whether float32 explains it.
var _ = Describe("blame by precision", func() {
	// Exp(89) is 4.5e38 in float64 and +Inf in float32 (the largest
	// float32 is 3.4e38), so Exp(89)·0.5 is 2.2e38 in float64, a float32
	// value, but +Inf in every float32 executor; Exp(0.89) is fine.
	const src = `//rx:scenario blame
//rx:input x const(89)
package blame

func e(x [B][2]float32) (y [B][2]float32) {
	y = Exp(x) * 0.5
	return
}

func small(x [B][2]float32) (y [B][2]float32) {
	y = Exp(x * 0.01)
	return
}
`

	It("blames float32 when a reference rounded to float32 overflows the same way", func() {
		res, err := harness.Run(context.Background(), []*program.File{parseRx("blame.rx", src)}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		fb := byExecutor(res.Cases, "fallback")
		Expect(fb).To(HaveLen(2))
		Expect(fb[0].Function).To(Equal("e"))
		Expect(fb[0].Status).To(Equal(harness.StatusFail))
		Expect(fb[0].Blame).To(Equal(harness.BlameFloat32))
		Expect(fb[0].Message).To(HavePrefix("float32 limit: a reference rounded to float32 at every op misses the same way\n"))
		Expect(fb[1].Status).To(Equal(harness.StatusPass))
		Expect(fb[1].Blame).To(BeEmpty())
	})

	It("blames the executor when float32 rounding does not explain the mismatch", func() {
		off := hookExecutor{name: "off", inner: fallback.Executor{},
			after: func(fn string, _ map[string]*tensor.Tensor, out *executor.Outcome, _ *error) {
				if fn == "small" {
					y := out.Outputs["y"].Clone()
					y.F32[1] += 0.01
					out.Outputs = map[string]*tensor.Tensor{"y": y}
				}
			}}
		res, err := harness.Run(context.Background(), []*program.File{parseRx("blame.rx", src)},
			harness.Options{Executors: []executor.Executor{off}})
		Expect(err).NotTo(HaveOccurred())
		cs := byExecutor(res.Cases, "off")
		Expect(cs[1].Function).To(Equal("small"))
		Expect(cs[1].Status).To(Equal(harness.StatusFail))
		Expect(cs[1].Blame).To(Equal(harness.BlameExecutor))
		Expect(cs[1].Message).NotTo(ContainSubstring("float32 limit"))
	})
})

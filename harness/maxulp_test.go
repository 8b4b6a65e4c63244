package harness_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Options.MaxULP", func() {
	// ulpsOff is the fallback with one element of y moved 67 float32
	// ULPs: well within the default rtol, far beyond what native and
	// torch are off by.
	ulpsOff := hookExecutor{name: "ulps-off", inner: fallback.Executor{},
		after: func(_ string, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error) {
			if *err == nil {
				y := out.Outputs["y"]
				y.F32[0] = math.Float32frombits(math.Float32bits(y.F32[0]) + 67)
			}
		}}
	src := "//rx:scenario ulps\n//rx:batches 2\n//rx:input x uniform(0.5, 1)\npackage p\n\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x)\n\treturn\n}\n"

	It("fails an output beyond the ULP bound that rtol and atol alone let pass", func() {
		f := parseRx("ulps.rx", src)
		opts := harness.Options{Executors: []executor.Executor{ulpsOff}}
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue(), "67 ULPs pass the default rtol")
		Expect(res.Cases[1].Outputs[0].MaxULP).To(BeNumerically(">=", 66))

		opts.MaxULP = 8
		res, err = harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeFalse())
		c := res.Cases[1]
		Expect(c.Executor).To(Equal(executor.Name("ulps-off")))
		Expect(c.Status).To(Equal(harness.StatusFail))
		Expect(c.Message).To(ContainSubstring("y: 1 / 8 mismatched"))
		Expect(c.Tolerances["y"].ULP).To(Equal(int64(8)))
	})

	It("is refused when negative", func() {
		_, err := harness.Run(context.Background(), []*program.File{parseRx("ulps.rx", src)}, harness.Options{MaxULP: -1})
		Expect(err).To(MatchError(harness.ErrOptions))
	})
})

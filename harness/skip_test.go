package harness_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
)

var _ = Describe("//rx:skip", func() {
	It("reports the named executor's cases of that function as skipped, with the line and reason, and runs the rest", func() {
		src := `//rx:scenario skipping
//rx:batches 2
//rx:input x normal(0, 1)
package p

func f(x [B][3]float32) (y [B][3]float32) {
	//rx:skip fallback "a documented difference"
	y = Tanh(x)
	return
}

func g(x [B][3]float32) (y [B][3]float32) {
	y = x * 2.0
	return
}
`
		f, err := program.ParseScenario("skip.rx", []byte(src))
		Expect(err).NotTo(HaveOccurred())
		res, err := harness.Run(context.Background(), []*program.File{f}, harness.Options{Executors: []executor.Executor{fallback.Executor{}}, SkipLocks: true})
		Expect(err).NotTo(HaveOccurred())
		got := map[string]harness.Status{}
		for _, c := range res.Cases {
			got[c.Function+"/"+string(c.Executor)] = c.Status
			if c.Function == "f" && c.Executor == executor.Fallback {
				Expect(c.Message).To(Equal(`skipped by //rx:skip at skip.rx:7:2: a documented difference`))
			}
		}
		Expect(got).To(Equal(map[string]harness.Status{
			"f/oracle": harness.StatusPass, "f/fallback": harness.StatusSkip,
			"g/oracle": harness.StatusPass, "g/fallback": harness.StatusPass,
		}))
		Expect(res.OK()).To(BeTrue(), "a skip is not a failure")
	})
})

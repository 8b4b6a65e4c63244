package harness_test

import (
	"context"
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// twinHook is a hookExecutor that must give the bits of the executor
// named twin (executor.Twin).
type twinHook struct {
	hookExecutor
	twin executor.Name
}

func (t twinHook) TwinOf() executor.Name { return t.twin }

// nudge moves the first element of every float output one ULP up: inside
// any tolerance, but not the same bits.
func nudge(_ string, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error) {
	if *err != nil {
		return
	}
	for _, t := range out.Outputs {
		if t.DType == tensor.Float32 && len(t.F32) > 0 {
			t.F32[0] = math.Nextafter32(t.F32[0], float32(math.Inf(1)))
		}
	}
}

var _ = Describe("executors that must equal another bit for bit (executor.Twin)", func() {
	run := func(execs ...executor.Executor) *harness.Result {
		GinkgoHelper()
		res, err := harness.Run(context.Background(), []*program.File{tinyFile()}, harness.Options{Executors: execs, Batches: []int{3}})
		Expect(err).NotTo(HaveOccurred())
		return res
	}
	base := hookExecutor{name: "base", inner: fallback.Executor{}}

	It("passes a variant that gives its twin's bits, and records the twin", func() {
		res := run(base, twinHook{hookExecutor{name: "variant", inner: fallback.Executor{}}, "base"})
		Expect(res.OK()).To(BeTrue())
		cs := byExecutor(res.Cases, "variant")
		Expect(cs).NotTo(BeEmpty())
		for _, c := range cs {
			Expect(c.Twin).To(Equal(executor.Name("base")))
			Expect(c.Status).To(Equal(harness.StatusPass))
		}
	})

	It("fails a variant one ULP off its twin although the oracle's tolerance holds, naming both", func() {
		res := run(base, twinHook{hookExecutor{name: "variant", inner: fallback.Executor{}, after: nudge}, "base"})
		Expect(res.OK()).To(BeFalse())
		for _, c := range byExecutor(res.Cases, "base") {
			Expect(c.Status).To(Equal(harness.StatusPass))
		}
		cs := byExecutor(res.Cases, "variant")
		Expect(cs).NotTo(BeEmpty())
		for _, c := range cs {
			Expect(c.Status).To(Equal(harness.StatusFail), c.Message)
			Expect(c.Message).To(ContainSubstring("variant differs bit for bit from base, which it must equal"))
			Expect(c.Message).To(MatchRegexp(`at \[0 0\]: \S+ \(0x[0-9a-f]{8}\) vs \S+ \(0x[0-9a-f]{8}\) \(variant vs base\)`))
			for _, o := range c.Outputs {
				Expect(o.OK).To(BeTrue(), "within the oracle's tolerance: only the twin rule fails it")
			}
		}
	})

	It("fails a variant that fails where its twin succeeds", func() {
		fail := func(_ string, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error) {
			*out, *err = executor.Outcome{}, errors.New("kernel refused")
		}
		res := run(base, twinHook{hookExecutor{name: "variant", inner: fallback.Executor{}, after: fail}, "base"})
		for _, c := range byExecutor(res.Cases, "variant") {
			Expect(c.Status).To(Equal(harness.StatusFail))
			Expect(c.Message).To(ContainSubstring("variant failed but base, which it must equal bit for bit, succeeded: "))
		}
	})

	It("runs the twin of a reported variant even when only the variant is reported", func() {
		res, err := harness.Run(context.Background(), []*program.File{tinyFile()}, harness.Options{
			Executors: []executor.Executor{base, twinHook{hookExecutor{name: "variant", inner: fallback.Executor{}, after: nudge}, "base"}},
			Batches:   []int{3}, Backends: []executor.Name{"variant"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(byExecutor(res.Cases, "base")).To(BeEmpty())
		for _, c := range byExecutor(res.Cases, "variant") {
			Expect(c.Status).To(Equal(harness.StatusFail))
			Expect(c.Twin).To(Equal(executor.Name("base")))
		}
	})

	It("compares a variant whose twin is not in the run with the oracle alone", func() {
		res := run(twinHook{hookExecutor{name: "variant", inner: fallback.Executor{}, after: nudge}, "base"})
		Expect(res.OK()).To(BeTrue())
		for _, c := range byExecutor(res.Cases, "variant") {
			Expect(c.Twin).To(BeEmpty())
		}
	})
})

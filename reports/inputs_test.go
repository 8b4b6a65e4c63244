package reports_test

import (
	"bytes"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/reports"
)

var _ = Describe("the inputs of a replayed run", func() {
	res := &harness.Result{Replays: []harness.Replay{
		{Scenario: "s", Function: "f", Batch: 16, Files: map[string]string{"x": "in/f/x.npy"}, Generated: []string{"w"}},
		{Scenario: "s", Function: "g", Batch: 1, Files: map[string]string{}, Generated: []string{"x"}},
	}, Shard: harness.Shard{Index: 1, Total: 2}, Groups: 3}

	It("are in the JSON report, one entry per group, and survive a round trip and a merge", func() {
		rep := reports.FromResult(res, reports.RunInfo{ToolVersion: "t"})
		Expect(rep.Inputs).To(Equal([]reports.InputSource{
			{Case: "s/f/b16", Files: map[string]string{"x": "in/f/x.npy"}, Generated: []string{"w"}},
			{Case: "s/g/b1", Files: map[string]string{}, Generated: []string{"x"}},
		}))
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, rep)).To(Succeed())
		Expect(buf.String()).To(ContainSubstring(`"inputs": [`))
		Expect(buf.String()).To(ContainSubstring(`"case": "s/f/b16"`))
		back, err := reports.ReadJSON(&buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Inputs).To(Equal(rep.Inputs))

		other := reports.FromResult(&harness.Result{Replays: []harness.Replay{{Scenario: "s", Function: "h", Batch: 2, Files: map[string]string{"x": "x.npy"}}},
			Shard: harness.Shard{Index: 2, Total: 2}, Groups: 3},
			reports.RunInfo{ToolVersion: "t"})
		merged, err := reports.Merge(rep, other)
		Expect(err).NotTo(HaveOccurred())
		Expect(merged.Inputs).To(HaveLen(3))
	})

	It("are left out of a run without --inputs", func() {
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, reports.FromResult(&harness.Result{}, reports.RunInfo{}))).To(Succeed())
		Expect(buf.String()).NotTo(ContainSubstring(`"inputs"`))
	})
})

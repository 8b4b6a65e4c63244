package reports_test

import (
	"bytes"
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

var _ = Describe("Merger.ReadJSON, the streamed merge of shard reports", func() {
	// shardsJSON returns the JSON of shard i/4 of a run of n groups, for
	// i = 1…4, with one case and one lock per group.
	shardsJSON := func(n int) [][]byte {
		var out [][]byte
		for i := 1; i <= 4; i++ {
			r := &reports.Report{Schema: reports.Schema, ToolVersion: "v", Seed: 7, Duration: float64(i), Shard: &reports.Shard{Index: i, Total: 4, Groups: n}}
			for g := i - 1; g < n; g += 4 {
				r.Cases = append(r.Cases, reports.Case{Scenario: "s", Function: "f", Batch: g + 1, Executor: "native", Group: g, Status: reports.StatusPass,
					Outputs: []reports.Output{{Name: "y", MaxAbs: 0.5, Report: "y: 0 / 4 mismatched"}}})
				r.Locks = append(r.Locks, reports.Lock{Scenario: "s", Function: "f", Group: 0, Status: reports.StatusPass})
			}
			var b bytes.Buffer
			Expect(reports.WriteJSON(&b, r)).To(Succeed())
			out = append(out, b.Bytes())
		}
		return out
	}
	merged := func(r *reports.Report, err error) string {
		GinkgoHelper()
		Expect(err).NotTo(HaveOccurred())
		var b bytes.Buffer
		Expect(reports.WriteJSON(&b, r)).To(Succeed())
		return b.String()
	}

	It("merges what Merge merges, in the unsharded order, whatever the order of the files", func() {
		js := shardsJSON(23)
		var m reports.Merger
		var decoded []*reports.Report
		for _, i := range []int{2, 0, 3, 1} {
			Expect(m.ReadJSON(bytes.NewReader(js[i]))).To(Succeed())
			r, err := reports.ReadJSON(bytes.NewReader(js[i]))
			Expect(err).NotTo(HaveOccurred())
			decoded = append(decoded, r)
		}
		got, err := m.Report()
		Expect(merged(got, err)).To(Equal(merged(reports.Merge(decoded...))))
		Expect(got.Cases).To(HaveLen(23))
		for g, c := range got.Cases {
			Expect(c.Group).To(Equal(g))
		}
		Expect(got.Duration).To(Equal(4.0))
	})

	It("refuses a missing shard and a case twice with Merge's texts", func() {
		js := shardsJSON(8)
		var m reports.Merger
		for _, i := range []int{0, 2, 3} {
			Expect(m.ReadJSON(bytes.NewReader(js[i]))).To(Succeed())
		}
		_, err := m.Report()
		Expect(err).To(MatchError("cannot merge reports: shard 2/4 is missing: its cases are in no report"))

		var twice reports.Merger
		for _, i := range []int{0, 1, 1, 2, 3} {
			Expect(twice.ReadJSON(bytes.NewReader(js[i]))).To(Succeed())
		}
		_, err = twice.Report()
		Expect(err).To(MatchError("cannot merge reports: reports 2 and 3 are both shard 2/4"))
	})

	It("refuses what is not a report with ReadJSON's texts", func() {
		for _, in := range []string{`{"cases": [`, `[1, 2]`, `{"schema": "rxeq.report/v0", "cases": []}`, `{"cases": [{"batch": "x"}]}`,
			`{"schema": "rxeq.report/v1", "cases": [{"batch": "x"}]}`, `{"schema": "rxeq.report/v1", "cases": {"a": [1]}}`, `nul`} {
			var m reports.Merger
			err := m.ReadJSON(strings.NewReader(in))
			Expect(err).To(HaveOccurred(), in)
			_, want := reports.ReadJSON(strings.NewReader(in))
			Expect(want).To(HaveOccurred(), in)
			Expect(errors.Is(err, reports.ErrSchema)).To(Equal(errors.Is(want, reports.ErrSchema)), "%s: %v, ReadJSON: %v", in, err, want)
			if errors.Is(want, reports.ErrSchema) {
				Expect(err.Error()).To(Equal(want.Error()), in)
			}
		}
	})
})

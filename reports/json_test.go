package reports_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

var _ = Describe("JSON", func() {
	It("round-trips a report exactly", func() {
		r := sampleReport()
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, r)).To(Succeed())
		back, err := reports.ReadJSON(&buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(r))
	})

	It("writes the documented field names", func() {
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, sampleReport())).To(Succeed())
		var raw map[string]any
		Expect(json.Unmarshal(buf.Bytes(), &raw)).To(Succeed())
		Expect(raw).To(HaveKeyWithValue("schema", "rxeq.report/v1"))
		Expect(raw).To(HaveKeyWithValue("tool_version", "v0.1.0"))
		Expect(raw).To(HaveKeyWithValue("seed", 42.0))
		c := raw["cases"].([]any)[1].(map[string]any)
		Expect(c).To(HaveKeyWithValue("status", "fail"))
		Expect(c).To(HaveKeyWithValue("duration_s", 1e-7))
		o := c["outputs"].([]any)[0].(map[string]any)
		Expect(o).To(HaveKeyWithValue("max_abs", 4.1e-05))
		Expect(o).To(HaveKeyWithValue("max_rel", "+Inf")) // JSON has no infinity
		Expect(o).To(HaveKeyWithValue("worst_index", []any{12.0, 3.0}))
		Expect(o).To(HaveKeyWithValue("tolerance", map[string]any{"rtol": 1e-5, "atol": 1e-6}))
	})

	It("encodes non-finite numbers as strings and reads them back", func() {
		for _, f := range []float64{math.Inf(1), math.Inf(-1), 0.1, -3e300, 5e-324} {
			b, err := json.Marshal(reports.Number(f))
			Expect(err).NotTo(HaveOccurred())
			var n reports.Number
			Expect(json.Unmarshal(b, &n)).To(Succeed())
			Expect(float64(n)).To(Equal(f))
		}
		var n reports.Number
		Expect(json.Unmarshal([]byte(`"NaN"`), &n)).To(Succeed())
		Expect(math.IsNaN(float64(n))).To(BeTrue())
		Expect(json.Unmarshal([]byte(`"lots"`), &n)).NotTo(Succeed())
	})

	It("rejects another schema version with a clear error", func() {
		_, err := reports.ReadJSON(strings.NewReader(`{"schema": "rxeq.report/v2", "cases": []}`))
		Expect(errors.Is(err, reports.ErrSchema)).To(BeTrue())
		Expect(err).To(MatchError(`reports: unsupported report schema "rxeq.report/v2": this version of rxeq reads "rxeq.report/v1"`))
		_, err = reports.ReadJSON(strings.NewReader(`{"cases": []}`))
		Expect(errors.Is(err, reports.ErrSchema)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring(`no "schema" field`))
		_, err = reports.ReadJSON(strings.NewReader(`[1,`))
		Expect(err).To(HaveOccurred())
	})

	It("fills in the schema and refuses to write a wrong one", func() {
		r := sampleReport()
		r.Schema = ""
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, r)).To(Succeed())
		Expect(buf.String()).To(HavePrefix("{\n  \"schema\": \"rxeq.report/v1\","))
		r.Schema = "other"
		Expect(errors.Is(reports.WriteJSON(&buf, r), reports.ErrSchema)).To(BeTrue())
	})
})

var _ = Describe("JSON text", func() {
	It("leaves <, > and & unescaped, in the report and in a dump's manifest", func() {
		var b bytes.Buffer
		r := &reports.Report{Cases: []reports.Case{{Scenario: "s", Function: "f", Executor: "native", Status: reports.StatusFail,
			Message: "y: 1 < 2 && 3 > 2", Outputs: []reports.Output{}}}}
		Expect(reports.WriteJSON(&b, r)).To(Succeed())
		Expect(b.String()).To(ContainSubstring(`"y: 1 < 2 && 3 > 2"`))
		Expect(b.String()).NotTo(ContainSubstring(`\u003c`))
		back, err := reports.ReadJSON(&b)
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Cases[0].Message).To(Equal("y: 1 < 2 && 3 > 2"))
	})
})

var _ = Describe("Merge", func() {
	c := func(fn string, b int, st reports.Status) reports.Case {
		return reports.Case{Scenario: "s", Function: fn, Batch: b, Executor: "native", Status: st, Outputs: []reports.Output{}}
	}
	It("keeps every case once, each lock once at its worst, and the longest duration", func() {
		a := &reports.Report{ToolVersion: "v", Seed: 1, Duration: 2, Cases: []reports.Case{c("f", 1, reports.StatusPass)},
			Locks: []reports.Lock{{Scenario: "s", Function: "f", Status: reports.StatusPass}}}
		b := &reports.Report{ToolVersion: "v", Seed: 1, Duration: 3, Cases: []reports.Case{c("f", 16, reports.StatusFail)},
			Locks: []reports.Lock{{Scenario: "s", Function: "f", Status: reports.StatusFail}}}
		m, err := reports.Merge(a, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Cases).To(HaveLen(2))
		Expect(m.Locks).To(HaveLen(1))
		Expect(m.Locks[0].Status).To(Equal(reports.StatusFail))
		Expect(m.Duration).To(Equal(3.0))
	})
	It("refuses reports of different runs", func() {
		_, err := reports.Merge(&reports.Report{Seed: 1}, &reports.Report{Seed: 2})
		Expect(err).To(MatchError(reports.ErrMerge))
		Expect(err.Error()).To(ContainSubstring("report 2 has seed 2, report 1 seed 1"))
		_, err = reports.Merge()
		Expect(err).To(MatchError(reports.ErrMerge))
	})
})

var _ = Describe("Merge of reports that say their shard", func() {
	// shard returns shard i of 3 of a run of 5 groups (g mod 3 + 1), with
	// two cases per group.
	shard := func(i int) *reports.Report {
		r := &reports.Report{ToolVersion: "v", Seed: 1, Shard: &reports.Shard{Index: i, Total: 3, Groups: 5}}
		for g := i - 1; g < 5; g += 3 {
			for _, ex := range []string{"oracle", "native"} {
				r.Cases = append(r.Cases, reports.Case{Scenario: "s", Function: "f", Batch: g + 1, Executor: ex, Group: g, Status: reports.StatusPass})
			}
			r.Locks = append(r.Locks, reports.Lock{Scenario: "s", Function: fmt.Sprint("f", g), Group: g, Status: reports.StatusPass})
		}
		return r
	}
	order := func(r *reports.Report) []string {
		var out []string
		for _, c := range r.Cases {
			out = append(out, c.Name())
		}
		return out
	}

	It("restores the unsharded run's order, whatever the order of the reports", func() {
		m, err := reports.Merge(shard(3), shard(1), shard(2))
		Expect(err).NotTo(HaveOccurred())
		Expect(order(m)).To(Equal([]string{"f/b1/oracle", "f/b1/native", "f/b2/oracle", "f/b2/native", "f/b3/oracle", "f/b3/native",
			"f/b4/oracle", "f/b4/native", "f/b5/oracle", "f/b5/native"}))
		Expect(m.Locks[0].Function).To(Equal("f0"))
		Expect(m.Locks[4].Function).To(Equal("f4"))
		Expect(m.Shard).To(Equal(&reports.Shard{Index: 1, Total: 1, Groups: 5}))
	})

	It("refuses a set with a shard missing, naming it", func() {
		_, err := reports.Merge(shard(1), shard(3))
		Expect(err).To(MatchError(reports.ErrMerge))
		Expect(err).To(MatchError("cannot merge reports: shard 2/3 is missing: its cases are in no report"))
		_, err = reports.Merge(shard(2))
		Expect(err).To(MatchError("cannot merge reports: shards 1/3, 3/3 are missing: their cases are in no report"))
	})

	It("refuses shards of different splits, a shard twice, a case outside its shard, and a mix with reports that do not say", func() {
		other := shard(2)
		other.Shard.Total = 4
		_, err := reports.Merge(shard(1), other, shard(3))
		Expect(err).To(MatchError(ContainSubstring("report 2 is shard 2/4 of a run of 5 groups, report 1 shard 1/3 of 5 groups: not shards of one run")))
		_, err = reports.Merge(shard(1), shard(2), shard(2), shard(3))
		Expect(err).To(MatchError(ContainSubstring("reports 2 and 3 are both shard 2/3")))
		stray := shard(2)
		stray.Cases[0].Group = 0
		_, err = reports.Merge(shard(1), stray, shard(3))
		Expect(err).To(MatchError(ContainSubstring("report 2 (shard 2/3) holds case s/f/b2/oracle of group 0, which is not in that shard of 5 groups")))
		old := shard(2)
		old.Shard = nil
		_, err = reports.Merge(shard(1), old, shard(3))
		Expect(err).To(MatchError(ContainSubstring("report 1 says which shard it holds, report 2 does not")))
	})
})

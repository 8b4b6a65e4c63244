package reports_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

// memSource is a Source that reads b.
func memSource(name string, b []byte) reports.Source {
	return reports.Source{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

// shardReports returns the reports of the shards of a run of n groups
// split total ways: per group, execs cases with a message of msg bytes;
// scenario s(g) for group g; a lock per scenario, checked by every shard.
func shardReports(n, total, execs, msg int, s func(g int) string) []*reports.Report {
	var out []*reports.Report
	for i := 1; i <= total; i++ {
		r := &reports.Report{Schema: reports.Schema, ToolVersion: "v", Compiler: "cc", Seed: 7, Duration: float64(i) / 3,
			Shard: &reports.Shard{Index: i, Total: total, Groups: n}, Cases: []reports.Case{}, Locks: []reports.Lock{}}
		for g := i - 1; g < n; g += total {
			for e := range execs {
				st := []reports.Status{reports.StatusPass, reports.StatusFail, reports.StatusXFail, reports.StatusError, reports.StatusSkip, reports.StatusXPass}[(g+e)%6]
				r.Cases = append(r.Cases, reports.Case{Scenario: s(g), Function: fmt.Sprintf("f%d", g%3), Batch: g, Executor: fmt.Sprintf("e%d", e), Group: g,
					Seed: uint64(g * 11), Status: st, Duration: 0.1 * float64(e+1), Message: strings.Repeat("m", msg),
					Outputs: []reports.Output{{Name: "y", Tolerance: &reports.Tolerance{RTol: 1e-5, ATol: float64(g%2) * 1e-6}, Report: "y: < & >"}}})
			}
		}
		for k, sc := range []string{s(0), s(n - 1), "locks-only"} {
			st := reports.StatusPass
			if i == 2 && k == 1 {
				st = reports.StatusFail
			}
			r.Locks = append(r.Locks, reports.Lock{Scenario: sc, Function: "f0", Group: k, Status: st, Duration: 0.25, Checks: []reports.LockCheck{}})
		}
		out = append(out, r)
	}
	return out
}

// encode returns the JSON of each report.
func encode(rs []*reports.Report) [][]byte {
	var out [][]byte
	for _, r := range rs {
		var b bytes.Buffer
		Expect(reports.WriteJSON(&b, r)).To(Succeed())
		out = append(out, b.Bytes())
	}
	return out
}

// streamed merges the reports js (in that order) with PlanMerge and
// Write.
func streamed(js [][]byte) (jsonOut, junitOut string, sum reports.MergeSummary, err error) {
	var srcs []reports.Source
	for i, b := range js {
		srcs = append(srcs, memSource(fmt.Sprintf("r%d.json", i+1), b))
	}
	p, err := reports.PlanMerge(context.Background(), srcs...)
	if err != nil {
		return "", "", sum, err
	}
	var j, x bytes.Buffer
	if err := p.Write(context.Background(), &j, &x); err != nil {
		return "", "", sum, err
	}
	return j.String(), x.String(), p.Summary(), nil
}

// inMemory merges the reports js (in that order) with Merger and writes
// the result: the reference.
func inMemory(js [][]byte) (jsonOut, junitOut string, err error) {
	var m reports.Merger
	for _, b := range js {
		if err := m.ReadJSON(bytes.NewReader(b)); err != nil {
			return "", "", err
		}
	}
	r, err := m.Report()
	if err != nil {
		return "", "", err
	}
	var j, x bytes.Buffer
	Expect(reports.WriteJSON(&j, r)).To(Succeed())
	Expect(reports.WriteJUnit(&x, r)).To(Succeed())
	return j.String(), x.String(), nil
}

var _ = Describe("PlanMerge and Write, the merge in two streamed passes", func() {
	byTens := func(g int) string { return fmt.Sprintf("s%d", g/10) }

	It("write what Merge's report is written as, byte for byte, in the run's order, whatever the order of the files", func() {
		js := encode(shardReports(47, 4, 3, 20, byTens))
		for _, order := range [][]int{{0, 1, 2, 3}, {2, 0, 3, 1}, {3, 2, 1, 0}} {
			var in [][]byte
			for _, i := range order {
				in = append(in, js[i])
			}
			j, x, sum, err := streamed(in)
			Expect(err).NotTo(HaveOccurred())
			wj, wx, err := inMemory(in)
			Expect(err).NotTo(HaveOccurred())
			Expect(j).To(Equal(wj))
			Expect(x).To(Equal(wx))
			back, err := reports.ReadJSON(strings.NewReader(j))
			Expect(err).NotTo(HaveOccurred())
			Expect(back.Cases).To(HaveLen(47 * 3))
			for k, c := range back.Cases {
				Expect(c.Group).To(Equal(k / 3))
			}
			want := reports.MergeSummary{Reports: 4, Cases: len(back.Cases), Locks: len(back.Locks)}
			for _, c := range back.Cases {
				switch c.Status {
				case reports.StatusPass, reports.StatusXPass:
					want.Passed++
				case reports.StatusSkip, reports.StatusXFail:
					want.Skipped++
				default:
					want.Failed++
				}
			}
			for _, l := range back.Locks {
				if l.Status == reports.StatusPass {
					want.LocksHeld++
				}
			}
			Expect(sum).To(Equal(want))
			Expect(sum.Locks).To(Equal(3))
			Expect(sum.LocksHeld).To(Equal(2))
		}
	})

	It("write the same when a scenario's groups are not all together (one JUnit pass per suite), and for reports that do not say their shard", func() {
		js := encode(shardReports(31, 3, 2, 5, func(g int) string { return fmt.Sprintf("s%d", g%4) }))
		j, x, _, err := streamed(js)
		Expect(err).NotTo(HaveOccurred())
		wj, wx, err := inMemory(js)
		Expect(err).NotTo(HaveOccurred())
		Expect(j).To(Equal(wj))
		Expect(x).To(Equal(wx))

		old := shardReports(20, 2, 2, 5, byTens)
		for _, r := range old {
			r.Shard = nil
		}
		js = encode(old)
		j, x, _, err = streamed([][]byte{js[1], js[0]})
		Expect(err).NotTo(HaveOccurred())
		wj, wx, err = inMemory([][]byte{js[1], js[0]})
		Expect(err).NotTo(HaveOccurred())
		Expect(j).To(Equal(wj))
		Expect(x).To(Equal(wx))
	})

	It("refuse an incomplete or inconsistent set with Merge's texts", func() {
		rs := shardReports(12, 3, 2, 5, byTens)
		js := encode(rs)
		check := func(in [][]byte, want string) {
			GinkgoHelper()
			_, _, _, err := streamed(in)
			Expect(errors.Is(err, reports.ErrMerge)).To(BeTrue(), "%v", err)
			Expect(err).To(MatchError(want))
			_, _, ierr := inMemory(in)
			Expect(ierr).To(MatchError(want))
		}
		check([][]byte{js[0], js[2]}, "cannot merge reports: shard 2/3 is missing: its cases are in no report")
		check([][]byte{js[0], js[1], js[1], js[2]}, "cannot merge reports: reports 2 and 3 are both shard 2/3")

		other := *rs[1]
		other.Shard = &reports.Shard{Index: 2, Total: 3, Groups: 13}
		check([][]byte{js[0], encode([]*reports.Report{&other})[0], js[2]},
			"cannot merge reports: report 2 is shard 2/3 of a run of 13 groups, report 1 shard 1/3 of 12 groups: not shards of one run")

		stray := *rs[1]
		stray.Cases = append([]reports.Case{}, rs[1].Cases...)
		stray.Cases[3].Group = 5 // shard 3's
		check([][]byte{js[0], encode([]*reports.Report{&stray})[0], js[2]},
			"cannot merge reports: report 2 (shard 2/3) holds case s0/f1/b4/e1 of group 5, which is not in that shard of 12 groups")

		seed := *rs[2]
		seed.Seed = 8
		check([][]byte{js[0], js[1], encode([]*reports.Report{&seed})[0]},
			"cannot merge reports: report 3 has seed 8, report 1 seed 7: not shards of one run")

		twice := *rs[0]
		twice.Cases = append(append([]reports.Case{}, rs[0].Cases[:2]...), rs[0].Cases...)
		check([][]byte{encode([]*reports.Report{&twice})[0], js[1], js[2]},
			"cannot merge reports: case s0/f0/b0/e0 is in report 1 and in report 1: were they sharded the same way?")

		// A shard out of the run's order cannot be merged as a stream.
		swapped := *rs[0]
		swapped.Cases = append([]reports.Case{}, rs[0].Cases...)
		swapped.Cases[0], swapped.Cases[2] = swapped.Cases[2], swapped.Cases[0]
		_, _, _, err := streamed([][]byte{encode([]*reports.Report{&swapped})[0], js[1], js[2]})
		Expect(errors.Is(err, reports.ErrMerge)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError("cannot merge reports: report 1 holds case s0/f0/b0/e1 of group 0 after a case of group 3: a shard's cases must come in the run's order, as rxeq run writes them"))

		// A source that cannot be read is named.
		_, _, _, err = streamed([][]byte{js[0], []byte(`{"schema": "rxeq.report/v0", "cases": []}`), js[2]})
		Expect(errors.Is(err, reports.ErrSchema)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(HavePrefix("r2.json: reports: unsupported report schema"))
	})

	// Merger (and rxeq merge before PlanMerge) held the merged report:
	// 1.1 and 10.5 MB here.
	It("hold one case at a time: the live heap does not grow with the number of cases", func() {
		// The same 40 groups with 10 and with 100 cases each, of 2 KB
		// messages: 400 and 4000 cases, 1.1 and 11 MB of JSON.
		peak := func(execs int) (uint64, int) {
			js := encode(shardReports(40, 4, execs, 2000, byTens))
			size := 0
			var srcs []reports.Source
			for i, b := range js {
				size += len(b)
				pr := func() (io.ReadCloser, error) { return io.NopCloser(&peakReader{r: bytes.NewReader(b)}), nil }
				srcs = append(srcs, reports.Source{Name: fmt.Sprint(i), Open: pr})
			}
			base := liveHeap()
			p, err := reports.PlanMerge(context.Background(), srcs...)
			Expect(err).NotTo(HaveOccurred())
			pass1 := liveHeap()
			jw, xw := &peakWriter{}, &peakWriter{}
			Expect(p.Write(context.Background(), jw, xw)).To(Succeed())
			top := max(pass1, jw.peak, xw.peak)
			runtime.KeepAlive(js) // the sources stay in the base
			return top - min(base, top), size
		}
		small, smallSize := peak(10)
		large, largeSize := peak(100)
		GinkgoWriter.Printf("%d bytes: %d live; %d bytes: %d live\n", smallSize, small, largeSize, large)
		Expect(largeSize).To(BeNumerically(">", 9*smallSize))
		Expect(large).To(BeNumerically("<", small+1<<20), "merging %d bytes held %d, %d bytes %d", largeSize, large, smallSize, small)
		Expect(large).To(BeNumerically("<", uint64(largeSize)/8))
	})
})

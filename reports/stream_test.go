package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

// bigReport returns a report of n cases with long messages.
func bigReport(n int) *reports.Report {
	r := &reports.Report{Schema: reports.Schema, ToolVersion: "v", Cases: []reports.Case{}, Locks: []reports.Lock{{Scenario: "s", Function: "f", Checks: []reports.LockCheck{}}},
		Shard: &reports.Shard{Index: 1, Total: 1, Groups: n}}
	for i := range n {
		r.Cases = append(r.Cases, reports.Case{Scenario: "s", Function: "f", Batch: i + 1, Executor: "native", Group: i, Status: reports.StatusFail,
			Outputs: []reports.Output{{Name: "y", MaxAbs: 1.5, Report: "y: 1 < 2 && 3 > 2"}}, Message: strings.Repeat("mismatch ", 100)})
	}
	return r
}

// peakWriter records the greatest live heap seen at its writes (after a
// collection, every 16th write).
type peakWriter struct {
	peak uint64
	n    int
}

func (p *peakWriter) Write(b []byte) (int, error) {
	if p.n++; p.n%16 == 1 {
		p.peak = max(p.peak, liveHeap())
	}
	return len(b), nil
}

// peakReader is a reader that records the greatest live heap seen at its
// reads.
type peakReader struct {
	r    io.Reader
	peak uint64
	n    int
}

func (p *peakReader) Read(b []byte) (int, error) {
	if p.n++; p.n%16 == 1 {
		p.peak = max(p.peak, liveHeap())
	}
	return p.r.Read(b)
}

// liveHeap returns the bytes of the heap that are still reachable.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

var _ = Describe("JSON reports of a large run", func() {
	It("are written as before, byte for byte, one case at a time", func() {
		r := bigReport(3)
		r.Inputs = []reports.InputSource{{Case: "s/f/b1", Files: map[string]string{"x": "x.npy"}}}
		var got bytes.Buffer
		Expect(reports.WriteJSON(&got, r)).To(Succeed())
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		Expect(enc.Encode(r)).To(Succeed())
		Expect(got.String()).To(Equal(want.String()))
		for _, empty := range []*reports.Report{{}, {Cases: []reports.Case{}, Locks: nil}} {
			got.Reset()
			want.Reset()
			Expect(reports.WriteJSON(&got, empty)).To(Succeed())
			c := *empty
			c.Schema = reports.Schema
			Expect(enc.Encode(&c)).To(Succeed())
			Expect(got.String()).To(Equal(want.String()))
		}
	})

	It("cost a fraction of their size to write and about their decoded size to read", func() {
		r := bigReport(20000)
		var buf bytes.Buffer
		Expect(reports.WriteJSON(&buf, r)).To(Succeed())
		size := uint64(buf.Len())
		base := liveHeap()
		w := &peakWriter{}
		Expect(reports.WriteJSON(w, r)).To(Succeed())
		Expect(w.peak-min(base, w.peak)).To(BeNumerically("<", size/4), fmt.Sprintf("writing %d bytes", size))

		data := buf.Bytes()
		r = nil
		base = liveHeap()
		rd := &peakReader{r: bytes.NewReader(data)}
		back, err := reports.ReadJSON(rd)
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Cases).To(HaveLen(20000))
		Expect(rd.peak-min(base, rd.peak)).To(BeNumerically("<", size), fmt.Sprintf("reading %d bytes", size))
	})
})

package reports_test

import (
	"bytes"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

var _ = Describe("merging shards keeps what ran the cases", func() {
	// Shard 1 ran torch's and numpy's cases, shard 2 ONNX Runtime's;
	// both say tfjs-wasm was unavailable, shard 2 also pytorch.
	shards := func() [][]byte {
		heads := []reports.Report{
			{Framework: "libtorch 1.13.0", Frameworks: map[string]string{"torch": "libtorch 1.13.0", "numpy": "numpy 1.24.2"},
				Unavailable: []reports.Unavailable{{Executor: "tfjs-wasm", Reason: "no node"}}},
			{Frameworks: map[string]string{"onnxruntime": "ONNX Runtime 1.30.0, graph optimization all"},
				Unavailable: []reports.Unavailable{{Executor: "tfjs-wasm", Reason: "no node"}, {Executor: "pytorch", Reason: "no torch"}}},
		}
		var out [][]byte
		for i, h := range heads {
			r := h
			r.Schema, r.ToolVersion, r.Seed = reports.Schema, "v", 7
			r.Shard = &reports.Shard{Index: i + 1, Total: 2, Groups: 2}
			r.Cases = []reports.Case{{Scenario: "s", Function: "f", Batch: i + 1, Executor: "native", Group: i, Status: reports.StatusPass}}
			var b bytes.Buffer
			Expect(reports.WriteJSON(&b, &r)).To(Succeed())
			out = append(out, b.Bytes())
		}
		return out
	}

	It("takes every framework and every unavailable executor into the merged report, in memory and streamed", func() {
		js := shards()
		jsonOut, junitOut, _, err := streamed(js)
		Expect(err).NotTo(HaveOccurred())
		r, err := reports.ReadJSON(strings.NewReader(jsonOut))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Framework).To(Equal("libtorch 1.13.0"))
		Expect(r.Frameworks).To(Equal(map[string]string{"torch": "libtorch 1.13.0", "numpy": "numpy 1.24.2",
			"onnxruntime": "ONNX Runtime 1.30.0, graph optimization all"}))
		Expect(r.Unavailable).To(Equal([]reports.Unavailable{{Executor: "tfjs-wasm", Reason: "no node"}, {Executor: "pytorch", Reason: "no torch"}}))
		Expect(junitOut).To(ContainSubstring(`name="framework.onnxruntime"`))
		Expect(junitOut).To(ContainSubstring(`name="unavailable.pytorch"`))

		memJSON, _, err := inMemory(js)
		Expect(err).NotTo(HaveOccurred())
		Expect(memJSON).To(Equal(jsonOut))
	})
})

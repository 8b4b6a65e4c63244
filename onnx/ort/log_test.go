package ort_test

import (
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/internal/onnxpb"
	"github.com/rextio/rxeq/onnx/ort"
)

var _ = Describe("ONNX Runtime's logging", func() {
	It("goes to the function SetLogger installs", func() {
		lib := needLibrary()
		var mu sync.Mutex
		var got []string
		ort.SetLogger(func(sev ort.Severity, category, message string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, category+": "+message)
		})
		defer ort.SetLogger(nil)
		// The linear model with an initializer no node reads: ONNX
		// Runtime warns that it removes it.
		_, p := compile(linear)
		model, err := onnx.Export(p, "score", onnx.Meta{})
		Expect(err).NotTo(HaveOccurred())
		m, err := onnxpb.UnmarshalModel(model)
		Expect(err).NotTo(HaveOccurred())
		m.Graph.Initializer = append(m.Graph.Initializer, &onnxpb.Tensor{Name: "unused", DataType: 1, Dims: []int64{1}, FloatData: []float32{1}})
		s, err := lib.NewSession(m.Marshal(), []string{"x", "w", "b"}, []string{"logits", "classes"}, ort.SessionOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Close()).To(Succeed())
		mu.Lock()
		defer mu.Unlock()
		Expect(got).To(ContainElement(ContainSubstring("unused")), "%q", got)
	})
})

package onnx_test

import (
	"bytes"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
)

var _ = Describe("Export", func() {
	It("writes every catalog function (the edge scenarios included) as a model python3-onnx's full checker accepts", func() {
		requireONNX()
		models := map[string][]byte{}
		for _, p := range catalog() {
			for _, f := range p.Funcs {
				models[f.Name] = export(p, f.Name)
			}
		}
		Expect(len(models)).To(BeNumerically(">=", 10))
		for name, msg := range checkModels(models) {
			Expect(msg).To(BeEmpty(), "model %s", name)
		}
		Expect(checkModels(models)).To(HaveLen(len(models)))
	})

	It("is deterministic: the same program gives the same bytes", func() {
		for _, p := range catalog() {
			for _, f := range p.Funcs {
				a := export(p, f.Name)
				Expect(export(p, f.Name)).To(Equal(a), "function %s", f.Name)
			}
		}
	})

	It("writes the reference scorer as the model a person would write: IR 8, opset 17, MatMul, Add, a Loop holding an If, Softmax, ArgMax", func() {
		requireONNX()
		p := catalog()[0]
		m := readWithPython(export(p, "score_linear"))
		Expect(m.IR).To(Equal(8))
		Expect(m.Opsets).To(Equal(map[string]int{"": 17}))
		Expect(m.Producer).To(Equal("rxeq"))
		Expect(m.Version).To(Equal("test"))
		Expect(m.Meta).To(HaveKeyWithValue("rxeq.function", "score_linear"))
		g := m.Graph
		Expect(g.Inputs).To(Equal([]pyValue{
			{Name: "x", Elem: 1, Dims: []string{"B", "32"}},
			{Name: "w", Elem: 1, Dims: []string{"32", "8"}},
			{Name: "b", Elem: 1, Dims: []string{"8"}},
		}))
		Expect(g.Outputs).To(Equal([]pyValue{
			{Name: "logits", Elem: 1, Dims: []string{"B", "8"}},
			{Name: "probs", Elem: 1, Dims: []string{"B", "8"}},
			{Name: "classes", Elem: 7, Dims: []string{"B"}},
		}))
		Expect(ops(g)).To(Equal([]string{"MatMul", "Add", "Loop", "Softmax", "ArgMax"}))
		Expect(find(g, "Softmax").Ints).To(Equal(map[string][]int64{"axis": {1}}))
		Expect(find(g, "ArgMax").Ints).To(Equal(map[string][]int64{"axis": {1}, "keepdims": {0}, "select_last_index": {0}}))
		loop := find(g, "Loop")
		Expect(loop.Outputs).To(Equal([]string{"logits"}))
		body := loop.Graphs["body"]
		Expect(body.Inputs).To(HaveLen(3)) // iteration number, condition, logits
		Expect(ops(body)).To(Equal([]string{"Div", "Mul", "Sub", "Equal", "If", "Identity"}))
		iff := find(body, "If")
		Expect(ops(iff.Graphs["then_branch"])).To(Equal([]string{"Mul"}))
		Expect(ops(iff.Graphs["else_branch"])).To(Equal([]string{"Tanh"}))
	})

	It("describes the model's inputs and outputs in the function's order, with the same names", func() {
		p := catalog()[0]
		sig, err := onnx.Describe(p, "score_pipeline")
		Expect(err).NotTo(HaveOccurred())
		var in, out []string
		for _, port := range sig.Inputs {
			in = append(in, port.Name)
			Expect(port.Value.Name).To(Equal(port.Name))
		}
		for _, port := range sig.Outputs {
			out = append(out, port.Name)
		}
		Expect(in).To(Equal([]string{"x", "mean", "scale", "w1", "b1", "w2", "b2", "phase"}))
		Expect(out).To(Equal([]string{"logits", "probs", "classes"}))
		Expect(sig.Error).To(BeEmpty(), "CheckedRem by the constant 2 cannot fail")
		Expect(bytes.Contains(export(p, "score_pipeline"), []byte(onnx.ErrorOutput))).To(BeFalse())
	})
})

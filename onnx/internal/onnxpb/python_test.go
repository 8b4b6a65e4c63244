package onnxpb_test

import (
	"encoding/json"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

// testdataDir is where Debian's libonnx-testdata puts ONNX's backend node
// tests (ci/setup.sh installs it).
const testdataDir = "/usr/share/libonnx-testdata/data/node"

// sameModels compares each pair of model files with python3-onnx: equal
// when, after clearing scalar fields that hold their default value (proto2
// keeps the presence of an explicitly written default, which this package
// does not represent), the two messages serialize to the same bytes. It
// returns the pairs that differ, with python's text of both.
const sameModels = `
import json, sys, onnx
from google.protobuf.descriptor import FieldDescriptor as F
def strip(m):
    for fd, v in m.ListFields():
        if fd.label == F.LABEL_REPEATED:
            if fd.type == F.TYPE_MESSAGE:
                for e in v: strip(e)
        elif fd.type == F.TYPE_MESSAGE:
            strip(v)
        elif fd.containing_oneof is None and v == fd.default_value:
            m.ClearField(fd.name)
    return m
bad = {}
args = sys.argv[1:]
for a, b in zip(args[::2], args[1::2]):
    ma = strip(onnx.load(a)); mb = strip(onnx.load(b))
    if ma.SerializeToString(deterministic=True) != mb.SerializeToString(deterministic=True):
        bad[a] = str(ma)[:2000] + "\n----\n" + str(mb)[:2000]
print(json.dumps(bad))
`

// reencode decodes each file, encodes it again next to a temp copy, and
// returns the (original, re-encoded) pairs of the models the package
// represents completely.
func reencode(files []string) (pairs []string, partial int) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for i, f := range files {
		b, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		m, err := onnxpb.UnmarshalModel(b)
		Expect(err).NotTo(HaveOccurred(), f)
		if !complete(m) {
			partial++
			continue
		}
		out := filepath.Join(dir, filepath.Base(filepath.Dir(f))+"-"+string(rune('a'+i%26))+".onnx")
		Expect(os.WriteFile(out, m.Marshal(), 0o644)).To(Succeed())
		pairs = append(pairs, f, out)
	}
	return pairs, partial
}

// complete reports whether decoding dropped nothing.
func complete(m *onnxpb.Model) bool {
	if len(m.Unsupported) > 0 {
		return false
	}
	var graph func(g *onnxpb.Graph) bool
	tensor := func(t *onnxpb.Tensor) bool { return len(t.Unsupported) == 0 }
	vi := func(vs []*onnxpb.ValueInfo) bool {
		for _, v := range vs {
			if v.Type != nil && len(v.Type.Unsupported) > 0 {
				return false
			}
		}
		return true
	}
	graph = func(g *onnxpb.Graph) bool {
		if g == nil {
			return true
		}
		if len(g.Unsupported) > 0 || !vi(g.Input) || !vi(g.Output) || !vi(g.ValueInfo) {
			return false
		}
		for _, t := range g.Initializer {
			if !tensor(t) {
				return false
			}
		}
		for _, n := range g.Node {
			for _, a := range n.Attribute {
				if len(a.Unsupported) > 0 || a.T != nil && !tensor(a.T) || !graph(a.G) {
					return false
				}
				for _, t := range a.Tensors {
					if !tensor(t) {
						return false
					}
				}
				for _, sub := range a.Graphs {
					if !graph(sub) {
						return false
					}
				}
			}
		}
		return true
	}
	return graph(m.Graph)
}

var _ = Describe("Models python3-onnx writes", func() {
	It("decode, and encode again to the same model", func() {
		requireONNX()
		dir := GinkgoT().TempDir()
		runPython(`
import sys, os, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
body = helper.make_graph([helper.make_node("Add", ["v", "one"], ["v2"]), helper.make_node("Identity", ["c"], ["c2"])], "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v", TensorProto.FLOAT, ["B", 3])],
    [helper.make_tensor_value_info("c2", TensorProto.BOOL, []), helper.make_tensor_value_info("v2", TensorProto.FLOAT, ["B", 3])])
nodes = [
    helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])),
    helper.make_node("Loop", ["n", "", "x"], ["y"], body=body),
    helper.make_node("Softmax", ["y"], ["p"], axis=1, doc_string="soft"),
    helper.make_node("ReduceMax", ["p"], ["m"], axes=[1], keepdims=0),
    helper.make_node("Custom", ["p"], ["q"], domain="my.domain", f=0.5, s="text", fs=[1.0, 2.5], ss=["a", "b"], t=numpy_helper.from_array(np.arange(6, dtype=np.float64).reshape(2, 3))),
]
g = helper.make_graph(nodes, "main",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 3]), helper.make_tensor_value_info("n", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("m", TensorProto.FLOAT, ["B"]), helper.make_tensor_value_info("q", TensorProto.FLOAT, None)],
    initializer=[numpy_helper.from_array(np.array([[1, 2], [3, 4]], dtype=np.int64), "w"),
                 helper.make_tensor("fd", TensorProto.FLOAT, [2], [0.25, -1.0]),
                 helper.make_tensor("i32", TensorProto.INT32, [3], [1, -2, 3]),
                 helper.make_tensor("s", TensorProto.STRING, [1], [b"hello"])],
    value_info=[helper.make_tensor_value_info("p", TensorProto.FLOAT, ["B", 3])], doc_string="graph doc")
m = helper.make_model(g, producer_name="test", opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my.domain", 1)], doc_string="model doc")
helper.set_model_props(m, {"author": "rxeq", "k": "v"})
onnx.save(m, os.path.join(d, "helper.onnx"))
`, dir)
		m, err := onnxpb.UnmarshalModel(must(os.ReadFile(filepath.Join(dir, "helper.onnx"))))
		Expect(err).NotTo(HaveOccurred())
		Expect(m.IRVersion).To(BeNumerically(">=", 8))
		Expect(m.Graph.Node[1].OpType).To(Equal("Loop"))
		Expect(m.Graph.Node[1].Attribute[0].G.Node[0].OpType).To(Equal("Add"))
		Expect(m.Graph.Node[3].Attribute).To(ConsistOf(
			&onnxpb.Attribute{Name: "axes", Type: onnxpb.AttrInts, Ints: []int64{1}},
			&onnxpb.Attribute{Name: "keepdims", Type: onnxpb.AttrInt, I: 0}))
		Expect(m.Graph.Input[0].Type.Tensor.Shape.Dim).To(Equal([]onnxpb.Dimension{{Param: "B"}, {Value: 3, HasValue: true}}))
		Expect(m.Graph.Output[1].Type.Tensor.Shape).To(BeNil())
		Expect(m.Graph.Initializer[0].Name).To(Equal("w"))
		Expect(m.Graph.Initializer[1].FloatData).To(Equal([]float32{0.25, -1}))
		Expect(m.Graph.Initializer[2].Int32Data).To(Equal([]int32{1, -2, 3}))
		pairs, partial := reencode([]string{filepath.Join(dir, "helper.onnx")})
		Expect(partial).To(BeZero())
		var bad map[string]string
		Expect(json.Unmarshal([]byte(runPython(sameModels, pairs...)), &bad)).To(Succeed())
		Expect(bad).To(BeEmpty())
	})

	It("decode: every model of ONNX's node tests (libonnx-testdata), and those it represents completely encode to the same model", func() {
		requireONNX()
		files, err := filepath.Glob(filepath.Join(testdataDir, "*", "model.onnx"))
		Expect(err).NotTo(HaveOccurred())
		if len(files) == 0 {
			Skip("libonnx-testdata is not installed (no " + testdataDir + "/*/model.onnx); ci/setup.sh installs it")
		}
		Expect(len(files)).To(BeNumerically(">", 500))
		pairs, partial := reencode(files)
		GinkgoWriter.Printf("%d models decoded, %d with fields this package does not represent\n", len(files), partial)
		Expect(len(pairs) / 2).To(BeNumerically(">", len(files)*9/10))
		var bad map[string]string
		Expect(json.Unmarshal([]byte(runPython(sameModels, pairs...)), &bad)).To(Succeed())
		Expect(bad).To(BeEmpty())
	})
})

func must[T any](v T, err error) T {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return v
}

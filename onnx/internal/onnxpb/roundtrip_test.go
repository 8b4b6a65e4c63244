package onnxpb_test

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

const python = "/usr/bin/python3"

func requireONNX() {
	GinkgoHelper()
	if err := exec.Command(python, "-c", "import onnx").Run(); err != nil {
		Skip("python3-onnx is not installed (" + python + " -c 'import onnx': " + err.Error() + "); ci/setup.sh installs it")
	}
}

func runPython(script string, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "python: %s", stderr.String())
	return string(out)
}

// rich is a model that sets every field the package represents.
func rich() *onnxpb.Model {
	sub := &onnxpb.Graph{Name: "body", Node: []*onnxpb.Node{{OpType: "Identity", Input: []string{"a"}, Output: []string{"b"}}},
		Input:  []*onnxpb.ValueInfo{{Name: "a", Type: &onnxpb.Type{Tensor: &onnxpb.TensorType{ElemType: onnxpb.TypeBool, Shape: &onnxpb.TensorShape{}}}}},
		Output: []*onnxpb.ValueInfo{{Name: "b", Type: &onnxpb.Type{Tensor: &onnxpb.TensorType{ElemType: onnxpb.TypeBool}}}}}
	return &onnxpb.Model{
		IRVersion: 8, ProducerName: "rxeq", ProducerVersion: "1.0", Domain: "ai.rxeq", ModelVersion: -3, DocString: "doc ü",
		OpsetImport:   []onnxpb.OperatorSetID{{Domain: "", Version: 17}, {Domain: "ai.onnx.ml", Version: 3}},
		MetadataProps: []onnxpb.StringStringEntry{{Key: "k", Value: "v"}, {Key: "", Value: ""}},
		Graph: &onnxpb.Graph{
			Name: "g", DocString: "graph doc",
			Node: []*onnxpb.Node{{
				Input: []string{"x", ""}, Output: []string{"y"}, Name: "n0", OpType: "Op", Domain: "d", DocString: "node doc",
				Attribute: []*onnxpb.Attribute{
					{Name: "f", Type: onnxpb.AttrFloat, F: 0},
					{Name: "f2", Type: onnxpb.AttrFloat, F: float32(math.Inf(-1))},
					{Name: "i", Type: onnxpb.AttrInt, I: math.MinInt64},
					{Name: "s", Type: onnxpb.AttrString, S: []byte("\x00\xff")},
					{Name: "t", Type: onnxpb.AttrTensor, T: &onnxpb.Tensor{Dims: []int64{2}, DataType: onnxpb.TypeInt64, Int64Data: []int64{-1, math.MaxInt64}}},
					{Name: "g", Type: onnxpb.AttrGraph, G: sub},
					{Name: "fs", Type: onnxpb.AttrFloats, Floats: []float32{1.5, -2}},
					{Name: "is", Type: onnxpb.AttrInts, Ints: []int64{0, -1, 1 << 40}},
					{Name: "ss", Type: onnxpb.AttrStrings, Strings: [][]byte{[]byte("a"), {}}},
					{Name: "ts", Type: onnxpb.AttrTensors, Tensors: []*onnxpb.Tensor{{DataType: onnxpb.TypeFloat, RawData: []byte{0, 0, 128, 63}}}},
					{Name: "gs", Type: onnxpb.AttrGraphs, Graphs: []*onnxpb.Graph{sub, sub}},
					{Name: "r", Type: onnxpb.AttrInt, RefAttrName: "outer", DocString: "attr doc"},
				},
			}},
			Initializer: []*onnxpb.Tensor{
				{Dims: []int64{2, 0}, DataType: onnxpb.TypeFloat, Name: "empty"},
				{Dims: []int64{3}, DataType: onnxpb.TypeFloat, FloatData: []float32{1, float32(math.NaN()), float32(math.Copysign(0, -1))}, Name: "f", DocString: "t doc"},
				{Dims: []int64{2}, DataType: onnxpb.TypeInt32, Int32Data: []int32{-5, 7}},
				{Dims: []int64{1}, DataType: onnxpb.TypeString, StringData: [][]byte{[]byte("hello")}},
				{Dims: []int64{2}, DataType: onnxpb.TypeDouble, DoubleData: []float64{math.Pi, -1e300}},
				{Dims: []int64{1}, DataType: onnxpb.TypeUint64, Uint64Data: []uint64{math.MaxUint64}},
				{Dims: []int64{4}, DataType: onnxpb.TypeFloat, Name: "ext", DataLocation: 1,
					ExternalData: []onnxpb.StringStringEntry{{Key: "location", Value: "w.bin"}}},
			},
			Input: []*onnxpb.ValueInfo{{Name: "x", DocString: "in doc", Type: &onnxpb.Type{Denotation: "TENSOR", Tensor: &onnxpb.TensorType{ElemType: onnxpb.TypeFloat,
				Shape: &onnxpb.TensorShape{Dim: []onnxpb.Dimension{{Param: "B"}, {Value: 0, HasValue: true}, {Value: 32, HasValue: true, Denotation: "FEATURE"}, {}}}}}}},
			Output:    []*onnxpb.ValueInfo{{Name: "y", Type: &onnxpb.Type{Tensor: &onnxpb.TensorType{ElemType: onnxpb.TypeInt64}}}},
			ValueInfo: []*onnxpb.ValueInfo{{Name: "v"}},
		},
	}
}

var _ = Describe("The wire format", func() {
	It("decodes what it encodes", func() {
		m := rich()
		b := m.Marshal()
		got, err := onnxpb.UnmarshalModel(b)
		Expect(err).NotTo(HaveOccurred())
		// NaN is not equal to itself: compare the re-encoding, then the rest.
		Expect(got.Marshal()).To(Equal(b))
		got.Graph.Initializer[1].FloatData[1], m.Graph.Initializer[1].FloatData[1] = 0, 0
		Expect(got).To(Equal(m))
	})

	It("writes bytes python3-onnx reads as the same model", func() {
		requireONNX()
		f := filepath.Join(GinkgoT().TempDir(), "m.onnx")
		Expect(os.WriteFile(f, rich().Marshal(), 0o644)).To(Succeed())
		out := runPython(`
import json, sys, onnx
from onnx import numpy_helper
m = onnx.load_from_string(open(sys.argv[1], "rb").read())
g = m.graph
n = g.node[0]
a = {x.name: x for x in n.attribute}
dims = [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else None) for d in g.input[0].type.tensor_type.shape.dim]
print(json.dumps({
  "ir": m.ir_version, "opsets": [[o.domain, o.version] for o in m.opset_import], "mv": m.model_version, "doc": m.doc_string,
  "meta": [[p.key, p.value] for p in m.metadata_props],
  "inputs": list(n.input), "i": a["i"].i, "f2": str(a["f2"].f), "s": list(a["s"].s), "t": numpy_helper.to_array(a["t"].t).tolist(),
  "g": a["g"].g.node[0].op_type, "fs": list(a["fs"].floats), "is": list(a["is"].ints), "ss": [x.decode() for x in a["ss"].strings],
  "ts": numpy_helper.to_array(a["ts"].tensors[0]).tolist(), "gs": len(a["gs"].graphs), "ref": a["r"].ref_attr_name,
  "f32": [str(v) for v in numpy_helper.to_array(g.initializer[1]).tolist()], "i32": numpy_helper.to_array(g.initializer[2]).tolist(),
  "str": g.initializer[3].string_data[0].decode(), "f64": numpy_helper.to_array(g.initializer[4]).tolist(),
  "u64": str(g.initializer[5].uint64_data[0]), "ext": g.initializer[6].external_data[0].value, "loc": g.initializer[6].data_location,
  "empty": list(numpy_helper.to_array(g.initializer[0]).shape), "dims": dims, "den": g.input[0].type.denotation,
}))
`, f)
		var got map[string]any
		Expect(json.Unmarshal([]byte(out), &got)).To(Succeed())
		Expect(got).To(Equal(map[string]any{
			"ir": 8.0, "opsets": []any{[]any{"", 17.0}, []any{"ai.onnx.ml", 3.0}}, "mv": -3.0, "doc": "doc ü",
			"meta":   []any{[]any{"k", "v"}, []any{"", ""}},
			"inputs": []any{"x", ""}, "i": float64(math.MinInt64), "f2": "-inf", "s": []any{0.0, 255.0},
			"t": []any{-1.0, float64(math.MaxInt64)}, "g": "Identity", "fs": []any{1.5, -2.0}, "is": []any{0.0, -1.0, float64(1 << 40)},
			"ss": []any{"a", ""}, "ts": 1.0, "gs": 2.0, "ref": "outer",
			"f32": []any{"1.0", "nan", "-0.0"}, "i32": []any{-5.0, 7.0}, "str": "hello", "f64": []any{math.Pi, -1e300},
			"u64": "18446744073709551615", "ext": "w.bin", "loc": 1.0, "empty": []any{2.0, 0.0},
			"dims": []any{"B", 0.0, 32.0, nil}, "den": "TENSOR",
		}))
	})
})

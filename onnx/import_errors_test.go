package onnx_test

import (
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

// vi is a tensor value info; a dim of -1 is dim_param "N".
func vi(name string, elem int32, dims ...int64) *onnxpb.ValueInfo {
	shape := &onnxpb.TensorShape{}
	for _, d := range dims {
		if d < 0 {
			shape.Dim = append(shape.Dim, onnxpb.Dimension{Param: "N"})
		} else {
			shape.Dim = append(shape.Dim, onnxpb.Dimension{Value: d, HasValue: true})
		}
	}
	return &onnxpb.ValueInfo{Name: name, Type: &onnxpb.Type{Tensor: &onnxpb.TensorType{ElemType: elem, Shape: shape}}}
}

func node(op, name string, in, out []string, attrs ...*onnxpb.Attribute) *onnxpb.Node {
	return &onnxpb.Node{OpType: op, Name: name, Input: in, Output: out, Attribute: attrs}
}

func iattr(name string, v int64) *onnxpb.Attribute {
	return &onnxpb.Attribute{Name: name, Type: onnxpb.AttrInt, I: v}
}

// handModel is a one-graph model of the default domain at opset.
func handModel(opset int64, in, out []*onnxpb.ValueInfo, nodes ...*onnxpb.Node) []byte {
	return (&onnxpb.Model{IRVersion: 8, ProducerName: "hand", OpsetImport: []onnxpb.OperatorSetID{{Version: opset}},
		Graph: &onnxpb.Graph{Name: "g", Input: in, Output: out, Node: nodes}}).Marshal()
}

// importErr imports b, expects an *onnx.ImportError and returns it.
func importErr(b []byte) *onnx.ImportError {
	GinkgoHelper()
	imp, err := onnx.Import(b, onnx.ImportOptions{})
	Expect(imp).To(BeNil())
	Expect(err).To(MatchError(onnx.ErrImport))
	var ie *onnx.ImportError
	Expect(errors.As(err, &ie)).To(BeTrue())
	return ie
}

var _ = Describe("Import's errors", func() {
	x := vi("x", onnxpb.TypeFloat, -1, 4)

	It("names the node, its op and the supported ops for an op without an rxeq form", func() {
		b := handModel(17, []*onnxpb.ValueInfo{x}, []*onnxpb.ValueInfo{vi("y", onnxpb.TypeFloat, -1, 4)},
			node("Relu", "ok", []string{"x"}, []string{"r"}), node("Erf", "erf_1", []string{"r"}, []string{"y"}))
		ie := importErr(b)
		Expect(ie.Class).To(Equal(onnx.ClassOp))
		Expect(ie.Error()).To(Equal(`onnx import: node "erf_1" (Erf): op Erf has no rxeq form; supported ops: ` + strings.Join(onnx.SupportedOps(), ", ")))
		Expect(ie.Error()).To(ContainSubstring("Gemm, Greater"))
	})

	It("refuses Softmax before opset 13 over any axis but the last, and translates it over the last", func() {
		in := vi("x", onnxpb.TypeFloat, 2, 3, 4)
		out := vi("y", onnxpb.TypeFloat, 2, 3, 4)
		ie := importErr(handModel(11, []*onnxpb.ValueInfo{in}, []*onnxpb.ValueInfo{out}, node("Softmax", "sm", []string{"x"}, []string{"y"})))
		Expect(ie.Error()).To(Equal(`onnx import: node "sm" (Softmax): Softmax before opset 13 normalizes over all dimensions from axis 1 on (flattened); rxeq's Softmax is over one axis, so only the last axis is translated`))
		Expect(ie.Class).To(Equal(onnx.ClassAttr))

		imp, err := onnx.Import(handModel(11, []*onnxpb.ValueInfo{in}, []*onnxpb.ValueInfo{out}, node("Softmax", "sm", []string{"x"}, []string{"y"}, iattr("axis", -1))), onnx.ImportOptions{Func: "f"})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring("y = Softmax(x, 2)"))
	})

	It("refuses what the language cannot express, with the reason", func() {
		ie := importErr(handModel(13, []*onnxpb.ValueInfo{x}, []*onnxpb.ValueInfo{vi("y", onnxpb.TypeInt64, -1, 1)},
			node("ArgMax", "am", []string{"x"}, []string{"y"}, iattr("axis", 1), iattr("select_last_index", 1))))
		Expect(ie.Error()).To(Equal(`onnx import: node "am" (ArgMax): ArgMax with select_last_index=1: rxeq's Argmax gives the first index of the maximum`))
		Expect(ie.Class).To(Equal(onnx.ClassAttr))

		ie = importErr(handModel(13, []*onnxpb.ValueInfo{x, vi("w", onnxpb.TypeFloat, 2, 4, 4)}, []*onnxpb.ValueInfo{vi("y", onnxpb.TypeFloat, 2, -1, 4)},
			node("MatMul", "mm", []string{"x", "w"}, []string{"y"})))
		Expect(ie.Error()).To(HavePrefix(`onnx import: node "mm" (MatMul): MatMul of ranks 2 and 3: rxeq's MatMul takes two rank-2 tensors; a batched MatMul (rank above 2) has no rxeq form`))

		ie = importErr(handModel(13, []*onnxpb.ValueInfo{vi("i", onnxpb.TypeInt32, 3)}, []*onnxpb.ValueInfo{vi("y", onnxpb.TypeInt32, 3)},
			node("Abs", "abs", []string{"i"}, []string{"y"})))
		Expect(ie.Error()).To(Equal(`onnx import: node "abs" (Abs): graph input "i" has element type INT32: rxeq programs take float32 tensors and int64 scalars`))
		Expect(ie.Class).To(Equal(onnx.ClassDType))

		ie = importErr(handModel(19, []*onnxpb.ValueInfo{x}, []*onnxpb.ValueInfo{vi("y", onnxpb.TypeFloat, -1, 4)}, node("Relu", "r", []string{"x"}, []string{"y"})))
		Expect(ie.Error()).To(Equal(`onnx import: opset 19 of the default domain: Import reads opsets 7 to 18`))
		Expect(ie.Class).To(Equal(onnx.ClassOpset))

		ie = importErr([]byte{0x0a})
		Expect(ie.Class).To(Equal(onnx.ClassModel))
		Expect(ie.Error()).To(HavePrefix("onnx import: "))
	})

	It("translates LeakyRelu only where Maximum(x, alpha*x) is the same, and Clip with its bounds", func() {
		y := vi("y", onnxpb.TypeFloat, -1, 4)
		alpha := func(a float32) *onnxpb.Attribute {
			return &onnxpb.Attribute{Name: "alpha", Type: onnxpb.AttrFloat, F: a}
		}
		ie := importErr(handModel(16, []*onnxpb.ValueInfo{x}, []*onnxpb.ValueInfo{y}, node("LeakyRelu", "lr", []string{"x"}, []string{"y"}, alpha(2))))
		Expect(ie.Error()).To(Equal(`onnx import: node "lr" (LeakyRelu): LeakyRelu with alpha 2: translated as Maximum(x, alpha*x), which holds for 0 < alpha < 1`))
		imp, err := onnx.Import(handModel(16, []*onnxpb.ValueInfo{x}, []*onnxpb.ValueInfo{y}, node("LeakyRelu", "lr", []string{"x"}, []string{"y"}, alpha(0.125))), onnx.ImportOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring("y = Maximum(x, 0.125*x)"))
		imp, err = onnx.Import(handModel(16, []*onnxpb.ValueInfo{x, vi("hi", onnxpb.TypeFloat)}, []*onnxpb.ValueInfo{y},
			node("Clip", "c", []string{"x", "", "hi"}, []string{"y"})), onnx.ImportOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring("y = Minimum(x, hi)"))
	})

	It("refuses a Loop whose condition is computed from the data", func() {
		body := &onnxpb.Graph{Name: "body",
			Input:  []*onnxpb.ValueInfo{vi("i", onnxpb.TypeInt64), vi("c", onnxpb.TypeBool), vi("n_in", onnxpb.TypeInt64)},
			Output: []*onnxpb.ValueInfo{vi("c_out", onnxpb.TypeBool), vi("n_out", onnxpb.TypeInt64)},
			Node: []*onnxpb.Node{
				node("Add", "inc", []string{"n_in", "i"}, []string{"n_out"}),
				node("Less", "more", []string{"n_out", "n_in"}, []string{"c_out"}),
			}}
		b := handModel(17, []*onnxpb.ValueInfo{vi("m", onnxpb.TypeInt64), vi("n", onnxpb.TypeInt64)}, []*onnxpb.ValueInfo{vi("out", onnxpb.TypeInt64)},
			node("Loop", "while", []string{"m", "", "n"}, []string{"out"}, &onnxpb.Attribute{Name: "body", Type: onnxpb.AttrGraph, G: body}))
		ie := importErr(b)
		Expect(ie.Error()).To(Equal(`onnx import: node "while" (Loop): a Loop whose condition is computed: rxeq's for runs a count known before the loop`))
		Expect(ie.Class).To(Equal(onnx.ClassControl))
	})
})

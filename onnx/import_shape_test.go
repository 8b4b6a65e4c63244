package onnx_test

import (
	"context"
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/internal/onnxpb"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// int64s is an int64 initializer (axes, a shape).
func int64s(name string, v ...int64) *onnxpb.Tensor {
	return &onnxpb.Tensor{Name: name, Dims: []int64{int64(len(v))}, DataType: onnxpb.TypeInt64, Int64Data: v}
}

// shapeModel is a one-node model at opset 13 whose int64 inputs are
// initializers.
func shapeModel(in, out *onnxpb.ValueInfo, n *onnxpb.Node, inits ...*onnxpb.Tensor) []byte {
	return (&onnxpb.Model{IRVersion: 8, ProducerName: "hand", OpsetImport: []onnxpb.OperatorSetID{{Version: 13}},
		Graph: &onnxpb.Graph{Name: "g", Input: []*onnxpb.ValueInfo{in}, Output: []*onnxpb.ValueInfo{out},
			Node: []*onnxpb.Node{n}, Initializer: inits}}).Marshal()
}

// runImported imports model, runs its program on x (and its weights) with
// the fallback (float32) and the oracle (float64, rounded back), checks
// that both give the same bits, and returns the program's source and its
// one output.
func runImported(model []byte, x *tensor.Tensor) (string, *tensor.Tensor) {
	GinkgoHelper()
	imp, err := onnx.Import(model, onnx.ImportOptions{Func: "f"})
	Expect(err).NotTo(HaveOccurred())
	f := imported(imp)
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	in := map[string]*tensor.Tensor{imp.Inputs[0].RX: x}
	for name, w := range imp.Weights {
		in[name] = w
	}
	got, err := fallback.Run(context.Background(), p.Func("f"), in)
	Expect(err).NotTo(HaveOccurred(), string(imp.Source))
	in64 := map[string]*tensor.Tensor{}
	for k, t := range in {
		in64[k] = t
	}
	ref, err := oracle.Run(context.Background(), f.Func("f"), in64)
	Expect(err).NotTo(HaveOccurred())
	out := got[imp.Outputs[0].RX]
	want := ref[imp.Outputs[0].RX]
	Expect(want.Shape).To(Equal(out.Shape))
	if want.DType == tensor.Int64 {
		Expect(out.I64).To(Equal(want.I64))
	} else {
		for i, v := range want.F64 {
			if math.IsNaN(v) {
				Expect(math.IsNaN(float64(out.F32[i]))).To(BeTrue(), "oracle and fallback at %d", i)
				continue
			}
			Expect(math.Float32bits(out.F32[i])).To(Equal(math.Float32bits(float32(v))), "oracle and fallback at %d: %v and %v", i, v, out.F32[i])
		}
	}
	// Round trip: the imported program, exported and imported again,
	// computes the same bits.
	roundTrip(f, p, f.Func("f"))
	return string(imp.Source), out
}

var _ = Describe("Import of Unsqueeze, Reshape, Flatten and ArgMax with keepdims=1", func() {
	// x is [3 4] of distinct values with a NaN, -0 and an infinity, so
	// that an inexact step would show.
	x := func() *tensor.Tensor {
		v := []float32{1.5, negZero(), 3, -2, float32(posInf()), 0.25, -7, 8, 9, -10, 11, nan32()}
		return tensor.FromFloat32(v, 3, 4)
	}
	sameValues := func(got, in *tensor.Tensor, shape ...int) {
		GinkgoHelper()
		Expect(got.Shape).To(Equal(shape))
		Expect(got.F32).To(HaveLen(len(in.F32)))
		for i, v := range in.F32 {
			if v != v {
				Expect(math.IsNaN(float64(got.F32[i]))).To(BeTrue(), "[%d] is NaN", i)
				continue
			}
			Expect(math.Float32bits(got.F32[i])).To(Equal(math.Float32bits(v)), "[%d]: %v, want %v (bit for bit: the sign of zero too)", i, got.F32[i], v)
		}
	}

	It("translates Unsqueeze in front as a product with ones, exactly", func() {
		m := shapeModel(vi("x", onnxpb.TypeFloat, 3, 4), vi("y", onnxpb.TypeFloat, 1, 3, 4),
			node("Unsqueeze", "u", []string{"x", "axes"}, []string{"y"}), int64s("axes", 0))
		src, y := runImported(m, x())
		Expect(src).To(ContainSubstring("//rx:input ones3 const(1)"))
		Expect(src).To(ContainSubstring("y = x * ones3"))
		sameValues(y, x(), 1, 3, 4)
	})

	It("translates Unsqueeze of a rank-1 tensor at the end as Transpose of the row", func() {
		in := tensor.FromFloat32([]float32{negZero(), 2, nan32()}, 3)
		m := shapeModel(vi("x", onnxpb.TypeFloat, 3), vi("y", onnxpb.TypeFloat, 3, 1),
			node("Unsqueeze", "u", []string{"x", "axes"}, []string{"y"}), int64s("axes", -1))
		src, y := runImported(m, in)
		Expect(src).To(ContainSubstring("y = Transpose(x * ones2)"))
		sameValues(y, in, 3, 1)
	})

	It("translates Unsqueeze of a reduction over the same axis as the reduction that keeps it", func() {
		b := (&onnxpb.Model{IRVersion: 8, ProducerName: "hand", OpsetImport: []onnxpb.OperatorSetID{{Version: 13}},
			Graph: &onnxpb.Graph{Name: "g", Input: []*onnxpb.ValueInfo{vi("x", onnxpb.TypeFloat, -1, 4)},
				Output: []*onnxpb.ValueInfo{vi("y", onnxpb.TypeFloat, -1, 4)},
				Node: []*onnxpb.Node{
					node("ReduceMax", "m", []string{"x"}, []string{"m"}, &onnxpb.Attribute{Name: "axes", Type: onnxpb.AttrInts, Ints: []int64{1}}, iattr("keepdims", 0)),
					node("Unsqueeze", "u", []string{"m", "axes"}, []string{"mk"}),
					node("Sub", "s", []string{"x", "mk"}, []string{"y"}),
				}, Initializer: []*onnxpb.Tensor{int64s("axes", 1)}}}).Marshal()
		in := tensor.FromFloat32([]float32{1, 5, 2, 3, -1, -4, -2, -8}, 2, 4)
		src, y := runImported(b, in)
		Expect(src).To(ContainSubstring("y = x - Max(x, 1, true)"))
		Expect(src).NotTo(ContainSubstring("ones"))
		Expect(y.F32).To(Equal([]float32{-4, 0, -3, -2, 0, -3, -1, -7}))
	})

	It("translates Reshape and Flatten that only remove or add axes of size 1, with 0 and -1 resolved", func() {
		col := tensor.FromFloat32([]float32{4, negZero(), nan32()}, 3, 1)
		m := shapeModel(vi("x", onnxpb.TypeFloat, -1, 1), vi("y", onnxpb.TypeFloat, -1),
			node("Reshape", "r", []string{"x", "shape"}, []string{"y"}), int64s("shape", -1))
		src, y := runImported(m, col)
		Expect(src).To(ContainSubstring("func f(x [B][1]float32) (y [B]float32)"))
		Expect(src).To(ContainSubstring("y = Max(x, 1)"))
		sameValues(y, col, 3)

		m = shapeModel(vi("x", onnxpb.TypeFloat, 3, 1), vi("y", onnxpb.TypeFloat, 3),
			node("Reshape", "r", []string{"x", "shape"}, []string{"y"}), int64s("shape", 0))
		src, y = runImported(m, col)
		Expect(src).To(ContainSubstring("y = Max(x, 1)"))
		sameValues(y, col, 3)

		m = shapeModel(vi("x", onnxpb.TypeFloat, 3, 4), vi("y", onnxpb.TypeFloat, 1, 3, 1, 4),
			node("Reshape", "r", []string{"x", "shape"}, []string{"y"}), int64s("shape", 1, 3, 1, -1))
		_, err := onnx.Import(m, onnx.ImportOptions{})
		Expect(err).To(MatchError(ContainSubstring(`node "r" (Reshape): Reshape of [3][4]float32 to [1][3][1][4]float32: it adds an axis of size 1 after the first dimension`)))

		m = shapeModel(vi("x", onnxpb.TypeFloat, 3, 4), vi("y", onnxpb.TypeFloat, 1, 1, 3, 4),
			node("Reshape", "r", []string{"x", "shape"}, []string{"y"}), int64s("shape", 1, 1, 3, -1))
		src, y = runImported(m, x())
		Expect(src).To(ContainSubstring("y = x * ones4"))
		sameValues(y, x(), 1, 1, 3, 4)

		m = shapeModel(vi("x", onnxpb.TypeFloat, 1, 3, 4), vi("y", onnxpb.TypeFloat, 1, 12),
			node("Flatten", "fl", []string{"x"}, []string{"y"}, iattr("axis", 1)))
		ie := importErrOf(onnx.Import(m, onnx.ImportOptions{}))
		Expect(ie.Class).To(Equal(onnx.ClassShape))
		Expect(ie.Error()).To(Equal(`onnx import: node "fl" (Flatten): Flatten of [1][3][4]float32 to [1][12]float32: it merges, splits or reorders dimensions, and rxeq has no reshape (only axes of size 1 are removed or added)`))

		// [3 1 4] flattened at axis 1 is [3 1*4]: the size-1 axis goes.
		in := tensor.FromFloat32(x().F32, 3, 1, 4)
		m = shapeModel(vi("x", onnxpb.TypeFloat, 3, 1, 4), vi("y", onnxpb.TypeFloat, 3, 4),
			node("Flatten", "fl", []string{"x"}, []string{"y"}, iattr("axis", 1)))
		src, y = runImported(m, in)
		Expect(src).To(ContainSubstring("y = Max(x, 1)"))
		sameValues(y, in, 3, 4)
	})

	It("translates ArgMax with keepdims=1 as Argmax(x, axis, true), over any axis", func() {
		m := shapeModel(vi("x", onnxpb.TypeFloat, 3, 4), vi("y", onnxpb.TypeInt64, 1, 4),
			node("ArgMax", "am", []string{"x"}, []string{"y"}, iattr("axis", 0), iattr("keepdims", 1)))
		src, y := runImported(m, x())
		Expect(src).To(ContainSubstring("y = Argmax(x, 0, true)"))
		// Column by column: the first maximum, the first NaN.
		Expect(y.Shape).To(Equal([]int{1, 4}))
		Expect(y.I64).To(Equal([]int64{1, 1, 2, 2}))

		m = shapeModel(vi("x", onnxpb.TypeFloat, -1, 4), vi("y", onnxpb.TypeInt64, -1, 1),
			node("ArgMax", "am", []string{"x"}, []string{"y"}, iattr("axis", -1)))
		src, y = runImported(m, x())
		Expect(src).To(ContainSubstring("func f(x [B][4]float32) (y [B][1]int64)"))
		Expect(src).To(ContainSubstring("y = Argmax(x, 1, true)"))
		Expect(y.Shape).To(Equal([]int{3, 1}))
		Expect(y.I64).To(Equal([]int64{2, 0, 3}))
	})

	It("refuses Unsqueeze inside a tensor and MatMul above rank 2, naming the node, the op and why", func() {
		m := shapeModel(vi("x", onnxpb.TypeFloat, 3, 4), vi("y", onnxpb.TypeFloat, 3, 1, 4),
			node("Unsqueeze", "mid", []string{"x", "axes"}, []string{"y"}), int64s("axes", 1))
		ie := importErrOf(onnx.Import(m, onnx.ImportOptions{}))
		Expect(ie.Class).To(Equal(onnx.ClassShape))
		Expect(ie.Error()).To(HavePrefix(`onnx import: node "mid" (Unsqueeze): Unsqueeze of [3][4]float32 to [3][1][4]float32: it adds an axis of size 1 after the first dimension`))

		m = shapeModel(vi("x", onnxpb.TypeFloat, 3, 4), vi("y", onnxpb.TypeFloat, 1, 1, 1, 3, 4),
			node("Unsqueeze", "deep", []string{"x", "axes"}, []string{"y"}), int64s("axes", 0, 1, 2))
		ie = importErrOf(onnx.Import(m, onnx.ImportOptions{}))
		Expect(ie.Class).To(Equal(onnx.ClassRank))
		Expect(ie.Error()).To(Equal(`onnx import: node "deep" (Unsqueeze): Unsqueeze of [3][4]float32 to rank 5: rxeq tensors have rank 0 to 4`))

		b := handModel(13, []*onnxpb.ValueInfo{vi("a", onnxpb.TypeFloat, 2, 3, 4), vi("w", onnxpb.TypeFloat, 2, 4, 5)},
			[]*onnxpb.ValueInfo{vi("y", onnxpb.TypeFloat, 2, 3, 5)}, node("MatMul", "bmm", []string{"a", "w"}, []string{"y"}))
		ie = importErr(b)
		Expect(ie.Class).To(Equal(onnx.ClassRank))
		Expect(ie.Error()).To(Equal(`onnx import: node "bmm" (MatMul): MatMul of ranks 3 and 3: rxeq's MatMul takes two rank-2 tensors; ` +
			`a batched MatMul (rank above 2) has no rxeq form: the language has no op that multiplies stacks of matrices, and no reshape to write one with`))
	})
})

// importErrOf expects Import's error to be an *onnx.ImportError and
// returns it.
func importErrOf(imp *onnx.Imported, err error) *onnx.ImportError {
	GinkgoHelper()
	Expect(imp).To(BeNil())
	var ie *onnx.ImportError
	Expect(errors.As(err, &ie)).To(BeTrue(), "%v", err)
	return ie
}

func posInf() float64 { return math.Inf(1) }
func nan32() float32  { return float32(math.NaN()) }

func negZero() float32 { return float32(math.Copysign(0, -1)) }

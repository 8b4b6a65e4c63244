package onnx_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// helperModel builds, with python3-onnx's helper, a scorer the way a
// person writes one by hand (weights as initializers, one in float_data
// and one in raw_data), checks it, and computes its outputs with NumPy.
const helperModel = `
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as T
d = sys.argv[1]
rng = np.random.default_rng(7)
W = rng.normal(size=(3, 5)).astype(np.float32)   # transB: (N, K)
C = rng.normal(size=(3,)).astype(np.float32)
x = rng.normal(size=(4, 5)).astype(np.float32)
nodes = [
    helper.make_node("Gemm", ["x", "W", "C"], ["h"], name="fc", transB=1, alpha=0.5, beta=2.0),
    helper.make_node("Relu", ["h"], ["r"]),
    helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("axes", T.INT64, [1], [1])),
    helper.make_node("ReduceSum", ["r", "axes"], ["s"], keepdims=1),
    helper.make_node("Sub", ["r", "s"], ["c"]),
    helper.make_node("Flatten", ["c"], ["logits"], axis=1),
    helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
    helper.make_node("ArgMax", ["probs"], ["classes"], axis=1, keepdims=0),
    helper.make_node("ReduceMax", ["logits"], ["m"], axes=[1], keepdims=1),
    helper.make_node("Squeeze", ["m", "axes"], ["top"]),
    helper.make_node("Max", ["logits", "r", "c"], ["mx"]),
]
g = helper.make_graph(nodes, "hand_scorer",
    [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 5])],
    [helper.make_tensor_value_info("logits", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("probs", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("classes", T.INT64, ["batch"]),
     helper.make_tensor_value_info("top", T.FLOAT, ["batch"]),
     helper.make_tensor_value_info("mx", T.FLOAT, ["batch", 3])],
    initializer=[helper.make_tensor("W", T.FLOAT, W.shape, W.flatten().tolist()), numpy_helper.from_array(C, "C")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, d + "/model.onnx")
h = 0.5 * (x @ W.T) + 2.0 * C
r = np.maximum(h, 0)
c = r - r.sum(axis=1, keepdims=True)
e = np.exp(c - c.max(axis=1, keepdims=True))
probs = e / e.sum(axis=1, keepdims=True)
np.save(d + "/x.npy", x)
np.save(d + "/logits.npy", c)
np.save(d + "/probs.npy", probs)
np.save(d + "/classes.npy", probs.argmax(axis=1).astype(np.int64))
np.save(d + "/top.npy", c.max(axis=1))
np.save(d + "/mx.npy", np.maximum(np.maximum(c, r), c))
`

// controlModel builds, with python3-onnx's helper, a model with a Loop
// (trip count a graph input, a loop-carried tensor, the condition passed
// through) and an If on an int64 comparison, as a person writes them,
// and computes its outputs with NumPy for m = 3.
const controlModel = `
import sys, numpy as np, onnx
from onnx import helper, TensorProto as T
d = sys.argv[1]
x = np.random.default_rng(11).normal(size=(2, 4)).astype(np.float32)
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Tanh", ["y_in"], ["t"]),
     helper.make_node("Constant", [], ["half"], value=helper.make_tensor("half", T.FLOAT, [], [0.5])),
     helper.make_node("Mul", ["t", "half"], ["th"]),
     helper.make_node("Add", ["th", "x"], ["y_out"])],
    "body",
    [helper.make_tensor_value_info("iter", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
     helper.make_tensor_value_info("y_in", T.FLOAT, ["n", 4])],
    [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("y_out", T.FLOAT, ["n", 4])])
then = helper.make_graph([helper.make_node("Relu", ["y"], ["a"])], "then", [], [helper.make_tensor_value_info("a", T.FLOAT, ["n", 4])])
els = helper.make_graph([helper.make_node("Neg", ["y"], ["b"])], "else", [], [helper.make_tensor_value_info("b", T.FLOAT, ["n", 4])])
g = helper.make_graph(
    [helper.make_node("Loop", ["m", "", "x"], ["y"], body=body),
     helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", T.INT64, [], [2])),
     helper.make_node("Greater", ["m", "two"], ["big"]),
     helper.make_node("If", ["big"], ["z"], then_branch=then, else_branch=els)],
    "control",
    [helper.make_tensor_value_info("x", T.FLOAT, ["n", 4]), helper.make_tensor_value_info("m", T.INT64, [])],
    [helper.make_tensor_value_info("y", T.FLOAT, ["n", 4]), helper.make_tensor_value_info("z", T.FLOAT, ["n", 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, d + "/model.onnx")
y = x.copy()
for _ in range(3):
    y = np.tanh(y) * np.float32(0.5) + x
np.save(d + "/x.npy", x)
np.save(d + "/y.npy", y)
np.save(d + "/z.npy", np.maximum(y, 0))
`

// closeTo holds got to NumPy's float32 want within 1e-5 (absolute and
// relative), int64 exactly.
func closeTo(name string, want, got *tensor.Tensor) {
	GinkgoHelper()
	Expect(got).NotTo(BeNil(), name)
	Expect(got.Shape).To(Equal(want.Shape), name)
	if want.DType == tensor.Int64 {
		Expect(got.I64).To(Equal(want.I64), name)
		return
	}
	w, g := want.Float64s(), got.Float64s()
	for i := range w {
		Expect(math.Abs(g[i]-w[i])).To(BeNumerically("<=", 1e-5+1e-5*math.Abs(w[i])), "%s[%d]", name, i)
	}
}

var _ = Describe("Import of models made elsewhere", func() {
	It("reads a scorer written with python3-onnx's helper (Gemm with transB, alpha and beta, ReduceSum, Flatten, Squeeze, variadic Max) and agrees with NumPy", func() {
		requireONNX()
		dir := GinkgoT().TempDir()
		runPython(helperModel, dir)
		b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		Expect(err).NotTo(HaveOccurred())
		imp, err := onnx.Import(b, onnx.ImportOptions{Source: "model.onnx"})
		Expect(err).NotTo(HaveOccurred())
		Expect(imp.Func).To(Equal("hand_scorer"))
		Expect(string(imp.Source)).To(ContainSubstring("func hand_scorer(x [B][5]float32, W [3][5]float32, C [3]float32) (logits [B][3]float32, probs [B][3]float32, classes [B]int64, top [B]float32, mx [B][3]float32)"))
		Expect(string(imp.Source)).To(ContainSubstring("0.5*MatMul(x, Transpose(W)) + 2.0*C"))
		Expect(imp.Weights).To(HaveKey("W"))
		Expect(imp.Weights).To(HaveKey("C"))
		f := imported(imp)
		in := map[string]*tensor.Tensor{"W": imp.Weights["W"], "C": imp.Weights["C"]}
		in["x"], err = npy.ReadFile(filepath.Join(dir, "x.npy"))
		Expect(err).NotTo(HaveOccurred())
		out, err := oracle.Run(context.Background(), f.Func(imp.Func), in)
		Expect(err).NotTo(HaveOccurred())
		for _, o := range imp.Outputs {
			want, err := npy.ReadFile(filepath.Join(dir, o.Model+".npy"))
			Expect(err).NotTo(HaveOccurred())
			closeTo(o.Model, want, out[o.RX])
		}
	})

	It("reads a Loop and an If written with python3-onnx's helper and agrees with NumPy", func() {
		requireONNX()
		dir := GinkgoT().TempDir()
		runPython(controlModel, dir)
		b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		Expect(err).NotTo(HaveOccurred())
		imp, err := onnx.Import(b, onnx.ImportOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring("func control(x [B][4]float32, m int64) (y [B][4]float32, z [B][4]float32) {\n\ty = x\n\tfor range m {\n\t\ty = Tanh(y)*0.5 + x\n\t}\n"))
		Expect(string(imp.Source)).To(ContainSubstring("\tif m > 2 {\n\t\tz = Relu(y)\n\t} else {\n\t\tz = -y\n\t}\n"))
		f := imported(imp)
		in := map[string]*tensor.Tensor{"m": tensor.Scalar(3)}
		in["x"], err = npy.ReadFile(filepath.Join(dir, "x.npy"))
		Expect(err).NotTo(HaveOccurred())
		out, err := oracle.Run(context.Background(), f.Func(imp.Func), in)
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"y", "z"} {
			want, err := npy.ReadFile(filepath.Join(dir, name+".npy"))
			Expect(err).NotTo(HaveOccurred())
			closeTo(name, want, out[name])
		}
	})

	It("reads an MLP exported by PyTorch (nn.Linear, ReLU, softmax, argmax) with its weights, and agrees with PyTorch", func() {
		if err := exec.Command(python, "-c", "import torch, onnx").Run(); err != nil {
			Skip("python3-torch is not installed (" + python + " -c 'import torch': " + err.Error() + "); ci/setup.sh installs it")
		}
		dir := GinkgoT().TempDir()
		script, err := filepath.Abs("testdata/torch_mlp.py")
		Expect(err).NotTo(HaveOccurred())
		out, err := exec.Command(python, script, dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		b, err := os.ReadFile(filepath.Join(dir, "mlp.onnx"))
		Expect(err).NotTo(HaveOccurred())
		imp, err := onnx.Import(b, onnx.ImportOptions{Func: "score_mlp", Source: "mlp.onnx"})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring("// Imported by rxeq import from mlp.onnx (producer pytorch"))
		Expect(string(imp.Source)).To(ContainSubstring("func score_mlp(x [B][6]float32, fc1_weight [5][6]float32, fc1_bias [5]float32, fc2_weight [3][5]float32, fc2_bias [3]float32) (logits [B][3]float32, probs [B][3]float32, classes [B]int64)"))
		f := imported(imp)
		in := map[string]*tensor.Tensor{}
		for k, v := range imp.Weights {
			in[k] = v
		}
		in["x"], err = npy.ReadFile(filepath.Join(dir, "x.npy"))
		Expect(err).NotTo(HaveOccurred())
		res, err := oracle.Run(context.Background(), f.Func("score_mlp"), in)
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"logits", "probs", "classes"} {
			want, err := npy.ReadFile(filepath.Join(dir, name+".npy"))
			Expect(err).NotTo(HaveOccurred())
			closeTo(name, want, res[name])
		}
	})
})

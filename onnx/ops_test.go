package onnx_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
)

// opsSrc uses every op of the language once, each in its own function so
// that the model holds exactly the node a person would write for it.
const opsSrc = `package p

func add(a [B][3]float32, b [3]float32) (y [B][3]float32) { y = a + b; return }
func sub(a [B][3]float32, b [3]float32) (y [B][3]float32) { y = a - b; return }
func mul(a [B][3]float32, b [3]float32) (y [B][3]float32) { y = a * b; return }
func div(a [B][3]float32, b [3]float32) (y [B][3]float32) { y = a / b; return }
func neg(a [B][3]float32) (y [B][3]float32) { y = -a; return }
func maximum(a [B][3]float32, b [3]float32) (y [B][3]float32) { y = Maximum(a, b); return }
func minimum(a [B][3]float32, b [3]float32) (y [B][3]float32) { y = Minimum(a, b); return }
func tanh(a [B][3]float32) (y [B][3]float32) { y = Tanh(a); return }
func exp(a [B][3]float32) (y [B][3]float32) { y = Exp(a); return }
func log(a [B][3]float32) (y [B][3]float32) { y = Log(a); return }
func sigmoid(a [B][3]float32) (y [B][3]float32) { y = Sigmoid(a); return }
func relu(a [B][3]float32) (y [B][3]float32) { y = Relu(a); return }
func abs(a [B][3]float32) (y [B][3]float32) { y = Abs(a); return }
func sqrt(a [B][3]float32) (y [B][3]float32) { y = Sqrt(a); return }
func matmul(a [B][3]float32, w [3][2]float32) (y [B][2]float32) { y = MatMul(a, w); return }
func transpose(a [B][3]float32) (y [3][B]float32) { y = Transpose(a); return }
func softmax(a [B][3]float32) (y [B][3]float32) { y = Softmax(a, 1); return }
func logsoftmax(a [B][3]float32) (y [B][3]float32) { y = LogSoftmax(a, 0); return }
func sum(a [B][3]float32) (y [B]float32) { y = Sum(a, 1); return }
func sumkeep(a [B][3]float32) (y [1][3]float32) { y = Sum(a, 0, true); return }
func mean(a [B][3]float32) (y [B][1]float32) { y = Mean(a, 1, true); return }
func max(a [B][3]float32) (y [3]float32) { y = Max(a, 0); return }
func argmax(a [B][3]float32) (y [B]int64) { y = Argmax(a, 1); return }
func argmax0(a [3]float32) (y int64) { y = Argmax(a, 0); return }
func scalar(a [B][3]float32) (y [B][3]float32) { y = a * 0.1; return }
`

var _ = Describe("The op mapping", func() {
	It("writes each op as the one ONNX node a person would write, with opset 17's attribute forms", func() {
		requireONNX()
		p := lower("ops.rx", opsSrc)
		type want struct {
			op    string
			ints  map[string][]int64
			extra int // inputs beyond the op's operands (ReduceSum's axes)
		}
		none := map[string][]int64{}
		table := map[string]want{
			"add": {"Add", none, 0}, "sub": {"Sub", none, 0}, "mul": {"Mul", none, 0}, "div": {"Div", none, 0},
			"neg": {"Neg", none, 0}, "maximum": {"Max", none, 0}, "minimum": {"Min", none, 0},
			"tanh": {"Tanh", none, 0}, "exp": {"Exp", none, 0}, "log": {"Log", none, 0}, "sigmoid": {"Sigmoid", none, 0},
			"relu": {"Relu", none, 0}, "abs": {"Abs", none, 0}, "sqrt": {"Sqrt", none, 0}, "matmul": {"MatMul", none, 0},
			"transpose":  {"Transpose", map[string][]int64{"perm": {1, 0}}, 0},
			"softmax":    {"Softmax", map[string][]int64{"axis": {1}}, 0},
			"logsoftmax": {"LogSoftmax", map[string][]int64{"axis": {0}}, 0},
			"sum":        {"ReduceSum", map[string][]int64{"keepdims": {0}}, 1},
			"sumkeep":    {"ReduceSum", map[string][]int64{"keepdims": {1}}, 1},
			"mean":       {"ReduceMean", map[string][]int64{"axes": {1}, "keepdims": {1}}, 0},
			"max":        {"ReduceMax", map[string][]int64{"axes": {0}, "keepdims": {0}}, 0},
			"argmax":     {"ArgMax", map[string][]int64{"axis": {1}, "keepdims": {0}, "select_last_index": {0}}, 0},
			"argmax0":    {"ArgMax", map[string][]int64{"axis": {0}, "keepdims": {0}, "select_last_index": {0}}, 0},
			"scalar":     {"Mul", none, 0},
		}
		Expect(p.Funcs).To(HaveLen(len(table)))
		models := map[string][]byte{}
		for _, f := range p.Funcs {
			models[f.Name] = export(p, f.Name)
		}
		for name, msg := range checkModels(models) {
			Expect(msg).To(BeEmpty(), name)
		}
		read := readAllWithPython(models)
		for name, w := range table {
			g := read[name].Graph
			Expect(ops(g)).To(Equal([]string{w.op}), name)
			n := find(g, w.op)
			Expect(n.Outputs).To(Equal([]string{"y"}), name)
			Expect(n.Ints).To(Equal(w.ints), name)
			Expect(len(n.Inputs)).To(Equal(len(g.Inputs)+w.extra+map[bool]int{true: 1}[name == "scalar"]), name)
		}
		// ReduceSum's axes are a constant input (opset 13 and later).
		g := read["sumkeep"].Graph
		Expect(find(g, "ReduceSum").Inputs[1]).To(Equal(find(g, "Constant").Outputs[0]))

		a := tensor.FromFloat32([]float32{0.5, -1, 2, 3, 0, -0.25, 1, 1, -4}, 3, 3)
		b := tensor.FromFloat32([]float32{2, -0.5, 4}, 3)
		var cases []evalCase
		for _, f := range p.Funcs {
			in := map[string]*tensor.Tensor{"a": a}
			switch f.Name {
			case "add", "sub", "mul", "div", "maximum", "minimum":
				in["b"] = b
			case "matmul":
				in["w"] = tensor.FromFloat32([]float32{1, 0, -1, 2, 0.5, 0.5}, 3, 2)
			case "argmax0":
				in["a"] = b
			}
			cases = append(cases, evalCase{name: f.Name, p: p, fn: f.Name, inputs: in})
		}
		agree(cases...)
	})
})

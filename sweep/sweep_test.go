package sweep_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/rxginkgo"
	"github.com/rextio/rxeq/sweep"
	"github.com/rextio/rxeq/tensor"
)

// softmax.rx describes the user's scorer: probabilities of 4 classes.
const softmaxRx = "//rx:scenario mine\n//rx:batches 8\n//rx:input x normal(0, 1)\npackage p\n\n" +
	"func probs(x [B][4]float32) (p [B][4]float32) {\n\tp = Softmax(x, 1)\n\treturn\n}\n"

// goSoftmax is the user's Go code; naive leaves out the max subtraction,
// so exp overflows on large logits.
func goSoftmax(naive bool) rxginkgo.Func {
	return func(_ context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
		x := in["x"]
		rows := x.Shape[0]
		out := make([]float32, len(x.F32))
		for r := range rows {
			row := x.F32[r*4 : r*4+4]
			m := float32(math.Inf(-1))
			for _, v := range row {
				m = max(m, v)
			}
			if naive {
				m = 0
			}
			var sum float32
			for i, v := range row {
				out[r*4+i] = float32(math.Exp(float64(v - m)))
				sum += out[r*4+i]
			}
			for i := range row {
				out[r*4+i] /= sum
			}
		}
		return map[string]*tensor.Tensor{"p": tensor.FromFloat32(out, x.Shape...)}, nil
	}
}

var _ = Describe("sweeping a user's function", func() {
	f, err := program.ParseScenario("softmax.rx", []byte(softmaxRx))
	if err != nil {
		panic(err)
	}

	It("passes a correct implementation on every seed and edge kind", func() {
		res, err := sweep.Run(context.Background(), f, "probs", rxginkgo.FuncExecutor("go", map[string]rxginkgo.Func{"probs": goSoftmax(false)}),
			sweep.Options{Seeds: 40})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Failure).To(BeNil())
		Expect(res.Runs).To(Equal(40))
	})

	It("finds the naive one's overflow with an edge kind and shrinks it to one row of simple values", func() {
		res, err := sweep.Run(context.Background(), f, "probs", rxginkgo.FuncExecutor("go", map[string]rxginkgo.Func{"probs": goSoftmax(true)}),
			sweep.Options{Seeds: 40})
		Expect(err).NotTo(HaveOccurred())
		fail := res.Failure
		Expect(fail).NotTo(BeNil())
		Expect(fail.Dists).To(HavePrefix("edge("))
		Expect(fail.Original).To(ContainSubstring("p: "))
		Expect(fail.Rows).To(Equal(1))
		x := fail.Inputs["x"]
		Expect(x.Shape).To(Equal([]int{1, 4}))
		zeros := 0
		for _, v := range x.F32 {
			if v == 0 {
				zeros++
			}
		}
		Expect(zeros).To(BeNumerically(">=", 3), "simplest values: %v", x.F32)
		Expect(fail.Report).To(ContainSubstring("p: "))
		Expect(fail.Shrinks).To(BeNumerically(">", 0))
	})

	It("excuses what float32 itself cannot hold, counted, and still finds a bug on the same inputs", func() {
		// edge(huge) weights overflow the first MatMul to ±Inf in float32,
		// where the float64 oracle goes on: every float32 implementation
		// differs there, rxeq's own fallback included.
		two, err := program.ParseScenario("two.rx", []byte("//rx:scenario two\n//rx:batches 1 4\n//rx:input x normal(0, 1)\n"+
			"//rx:input w1 normal(0, 0.3)\n//rx:input w2 normal(0, 0.3)\npackage p\n\n"+
			"func score(x [B][8]float32, w1 [8][16]float32, w2 [16][4]float32) (p [B][4]float32) {\n"+
			"\tp = Softmax(MatMul(Relu(MatMul(x, w1)), w2), 1)\n\treturn\n}\n"))
		Expect(err).NotTo(HaveOccurred())
		res, err := sweep.Run(context.Background(), two, "score", fallback.Executor{}, sweep.Options{Seeds: 60, Edges: []string{"huge"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Failure).To(BeNil())
		Expect(res.Runs).To(Equal(120))
		Expect(res.Excused).To(BeNumerically(">", 0))
		Expect(res.Excused).To(BeNumerically("<", res.Runs))

		// The same program with Relu left out (a bug) fails, excuses or not.
		noRelu := func(_ context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			x, w1, w2 := in["x"], in["w1"], in["w2"]
			b := x.Shape[0]
			out := make([]float32, b*4)
			for r := range b {
				var h [16]float64
				for j := range h {
					for k := range 8 {
						h[j] += float64(x.F32[r*8+k]) * float64(w1.F32[k*16+j])
					}
				}
				var z [4]float64
				m := math.Inf(-1)
				for c := range z {
					for j := range h {
						z[c] += h[j] * float64(w2.F32[j*4+c])
					}
					m = max(m, z[c])
				}
				var sum float64
				for c := range z {
					z[c] = math.Exp(z[c] - m)
					sum += z[c]
				}
				for c := range z {
					out[r*4+c] = float32(z[c] / sum)
				}
			}
			return map[string]*tensor.Tensor{"p": tensor.FromFloat32(out, b, 4)}, nil
		}
		res, err = sweep.Run(context.Background(), two, "score", rxginkgo.FuncExecutor("go", map[string]rxginkgo.Func{"score": noRelu}),
			sweep.Options{Seeds: 60, Edges: []string{"huge"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Failure).NotTo(BeNil())
	})
})

package ort_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/tensor"
)

// The differences between ONNX Runtime 1.30 and rxeq's contract that
// docs/onnx.md lists, each pinned at both optimization levels (or at the
// one it shows at), against the fallback interpreter (which holds the
// contract exactly on these cases). When a spec here fails, ONNX Runtime
// changed: update the table in docs/onnx.md and the ledger's entries
// (ledger/known.json) with it.

const knownSrc = `package p

func f(x [B][4]float32, y [B][4]float32, d int64) (mx [B][4]float32, mn [B][4]float32, rl [B][4]float32, sg [B][4]float32, rm [B]float32, am [B]int64, r int64) {
	mx = Maximum(x, y)
	mn = Minimum(x, y)
	rl = Relu(x)
	sg = Sigmoid(x)
	rm = Max(x, 1)
	am = Argmax(x, 1)
	r = CheckedRem(1, d)
	return
}
`

var negZero = float32(math.Copysign(0, -1))

func knownInputs() map[string]*tensor.Tensor {
	nan := float32(math.NaN())
	return map[string]*tensor.Tensor{
		"x": tensor.FromFloat32([]float32{negZero, 0, -12, 1, 1, nan, 2, 0, nan, 1, 3, 2}, 3, 4),
		"y": tensor.FromFloat32([]float32{0, negZero, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 3, 4),
		"d": tensor.Scalar(3),
	}
}

func signs(v []float32) []bool {
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = math.Signbit(float64(x))
	}
	return out
}

var _ = Describe("ONNX Runtime's known differences", Ordered, func() {
	var want map[string]*tensor.Tensor
	BeforeAll(func() {
		needLibrary()
		f, p := compile(knownSrc)
		fb, err := fallback.Executor{}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		out, err := fb.Run(context.Background(), "f", knownInputs())
		Expect(err).NotTo(HaveOccurred())
		want = out.Outputs
	})

	for _, level := range []int{0, 1} {
		It("at both levels: the sign of zero in Max, Min and Relu", func() {
			out, err := run(both()[level], knownSrc, "f", knownInputs())
			Expect(err).NotTo(HaveOccurred())
			// rxeq: Maximum(-0, +0) and Maximum(+0, -0) are +0, Minimum
			// gives -0, Relu(-0) is +0. ONNX Runtime returns the second
			// operand of Max and Min when they compare equal, and Relu(-0)
			// is -0.
			Expect(signs(want["mx"].F32[:2])).To(Equal([]bool{false, false}))
			Expect(signs(out["mx"].F32[:2])).To(Equal([]bool{false, true}))
			Expect(signs(want["mn"].F32[:2])).To(Equal([]bool{true, true}))
			Expect(signs(out["mn"].F32[:2])).To(Equal([]bool{false, true}))
			Expect(signs(want["rl"].F32[:1])).To(Equal([]bool{false}))
			Expect(signs(out["rl"].F32[:1])).To(Equal([]bool{true}))
		})

		It("at both levels: ReduceMax and ArgMax see a NaN only when it comes first", func() {
			out, err := run(both()[level], knownSrc, "f", knownInputs())
			Expect(err).NotTo(HaveOccurred())
			// Row 1 is [1 NaN 2 0]: rxeq's max is NaN and its argmax 1 (the
			// first NaN, as NumPy); ONNX Runtime ignores the NaN.
			Expect(math.IsNaN(float64(want["rm"].F32[1]))).To(BeTrue())
			Expect(want["am"].I64[1]).To(Equal(int64(1)))
			Expect(out["rm"].F32[1]).To(Equal(float32(2)))
			Expect(out["am"].I64[1]).To(Equal(int64(2)))
			// Row 2 is [NaN 1 3 2]: a NaN in front is seen.
			Expect(math.IsNaN(float64(out["rm"].F32[2]))).To(BeTrue())
			Expect(out["am"].I64[2]).To(Equal(int64(0)))
		})

		It("at both levels: Sigmoid(-12) is 0.56% off", func() {
			out, err := run(both()[level], knownSrc, "f", knownInputs())
			Expect(err).NotTo(HaveOccurred())
			exact := 1 / (1 + math.Exp(12))
			Expect(float64(want["sg"].F32[2])).To(BeNumerically("~", exact, exact*1e-6))
			rel := math.Abs(float64(out["sg"].F32[2])-exact) / exact
			Expect(rel).To(BeNumerically(">", 5e-3))
			Expect(rel).To(BeNumerically("<", 6e-3))
		})
	}

	It("with the optimizations on, 1 - Div(1, b) * b is wrong for int64 (DivMulFusion); off, it is right", func() {
		out, err := run(both()[0], knownSrc, "f", knownInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(want["r"].I64).To(Equal([]int64{1}))
		Expect(out["r"].I64).To(Equal([]int64{0}), "CheckedRem(1, 3) with ORT_ENABLE_ALL")
		out, err = run(both()[1], knownSrc, "f", knownInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(out["r"].I64).To(Equal([]int64{1}), "CheckedRem(1, 3) with ORT_DISABLE_ALL")
	})

	It("with the optimizations on, a nested If under a constant condition that assigns a value to itself is refused at session creation (InlineIfSubgraph); off, it runs", func() {
		// rxeq fuzz --seed 50 --executors oracle,onnxruntime, reduced.
		src := "package p\n\nfunc f(a0 [B][5][5]float32) (out0 [1][5][5]float32) {\n\tout0 = a0\n\tif !(3 == 0) {\n" +
			"\t\tif 9223372036854775806 != 2 {\n\t\t\tout0 = out0\n\t\t}\n\t\tout0 = Maximum(Mean(out0, 0), Sum(out0, 0, true))\n\t}\n\treturn\n}\n"
		in := map[string]*tensor.Tensor{"a0": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 0.5}, 1, 1, 5, 5)}
		_, err := run(both()[0], src, "f", in)
		Expect(err).To(MatchError(ContainSubstring("InlineIfSubgraph")))
		Expect(err).To(MatchError(ContainSubstring("is not If node's input or previous node output in this subgraph")))
		out, err := run(both()[1], src, "f", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(out["out0"].Shape).To(Equal([]int{1, 5, 5}))
	})

	It("between the levels: MatMul then Add at batch 1 gives other last bits with the optimizations on (fused)", func() {
		src := "package p\n\nfunc f(x [B][32]float32, w [32][8]float32, b [8]float32) (y [B][8]float32) {\n\ty = MatMul(x, w) + b\n\treturn\n}\n\n" +
			"func g(x [B][32]float32, w [32][8]float32, b [8]float32) (y [B][8]float32) {\n\ty = MatMul(x, w) - b + b\n\treturn\n}\n"
		differ := func(batch int) (add, plain int) {
			in := map[string]*tensor.Tensor{
				"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 1, batch, 32),
				"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 0.3}, 2, 32, 8),
				"b": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 3, 8),
			}
			count := func(fn string) (n int) {
				on, err := run(both()[0], src, fn, in)
				Expect(err).NotTo(HaveOccurred())
				off, err := run(both()[1], src, fn, in)
				Expect(err).NotTo(HaveOccurred())
				for i := range on["y"].F32 {
					if on["y"].F32[i] != off["y"].F32[i] {
						n++
					}
				}
				return n
			}
			return count("f"), count("g")
		}
		add, plain := differ(1)
		Expect(add).To(BeNumerically(">", 0), "MatMul+Add at batch 1")
		Expect(plain).To(Equal(0), "MatMul then Sub: nothing to fuse")
		add, plain = differ(16)
		Expect([]int{add, plain}).To(Equal([]int{0, 0}), "batch 16")
	})

	It("at both levels: Tanh is up to 5 ULP from the correctly rounded value on [-10, 10) (rxeq holds ONNX Runtime to 1)", func() {
		src := "package p\n\nfunc f(x [B]float32) (y [B]float32) {\n\ty = Tanh(x)\n\treturn\n}\n"
		const n = 1 << 16
		x := tensor.NewFloat32(n)
		for i := range x.F32 {
			x.F32[i] = -10 + 20*float32(i)/n
		}
		for _, e := range both() {
			out, err := run(e, src, "f", map[string]*tensor.Tensor{"x": x})
			Expect(err).NotTo(HaveOccurred())
			worst := 0
			for i, v := range out["y"].F32 {
				if d := ulps(v, float32(math.Tanh(float64(x.F32[i])))); d > worst {
					worst = d
				}
			}
			Expect(worst).To(Equal(5), string(e.Name()))
		}
	})
})

// ulps is the distance of a and b in float32 units in the last place.
func ulps(a, b float32) int {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0x80000000 == (ib < 0x80000000) {
		d := ia - ib
		if d < 0 {
			d = -d
		}
		return int(d)
	}
	return int((ia &^ 0x80000000) + (ib &^ 0x80000000))
}

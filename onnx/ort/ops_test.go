package ort_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/tensor"
)

// Each op of the language through both executors against the oracle, on
// hand-written values (small, large, zero, negative, ties) and on random
// ones; the known differences (known_test.go) are left to their specs.
var _ = Describe("every op against the oracle", func() {
	x := tensor.FromFloat32([]float32{0.5, -1.25, 3, 0, -0.001, 7.5, -20, 1e-3, 2, 2, -2, 0.25}, 3, 4)
	y := tensor.FromFloat32([]float32{1.5, 2, -3, 0.75, 4, -7.5, 0.5, 1e3, 2, -2, 3, 0.125}, 3, 4)
	p := tensor.FromFloat32([]float32{0.5, 1, 2, 3, 1e-3, 7.5, 20, 1e3, 0.01, 100, 1e-6, 0.25}, 3, 4)
	random := func(seed uint64, lo, hi float64) *tensor.Tensor {
		return tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: lo, B: hi}, seed, 64, 4)
	}
	tol := compare.Tolerance{RTol: 1e-5, ATol: 1e-6}

	DescribeTable("agrees within rtol 1e-5, atol 1e-6",
		func(expr, outType string) {
			needLibrary()
			src := "package p\n\nfunc f(x [B][4]float32, y [B][4]float32, p [B][4]float32) (r " + outType + ") {\n\tr = " + expr + "\n\treturn\n}\n"
			f, prog := compile(src)
			o, err := oracle.Executor{}.Prepare(context.Background(), f, prog)
			Expect(err).NotTo(HaveOccurred())
			for _, in := range []map[string]*tensor.Tensor{
				{"x": x, "y": y, "p": p},
				{"x": random(1, -5, 5), "y": random(2, -5, 5), "p": random(3, 0.01, 50)},
			} {
				want, err := o.Run(context.Background(), "f", in)
				Expect(err).NotTo(HaveOccurred())
				for _, e := range both() {
					got, err := run(e, src, "f", in)
					Expect(err).NotTo(HaveOccurred(), string(e.Name()))
					if got["r"].DType == tensor.Int64 {
						Expect(got["r"].I64).To(Equal(want.Outputs["r"].I64), string(e.Name()))
						continue
					}
					m := compare.ToOracle("r", want.Outputs["r"], got["r"], tol)
					Expect(m.OK).To(BeTrue(), string(e.Name())+": "+m.Report)
				}
			}
		},
		Entry("Add", "x + y", "[B][4]float32"),
		Entry("Sub", "x - y", "[B][4]float32"),
		Entry("Mul", "x * y", "[B][4]float32"),
		Entry("Div", "x / y", "[B][4]float32"),
		Entry("Add of a literal, broadcast", "x + 0.5", "[B][4]float32"),
		Entry("Neg", "-x", "[B][4]float32"),
		Entry("Max", "Maximum(x, y)", "[B][4]float32"),
		Entry("Min", "Minimum(x, y)", "[B][4]float32"),
		Entry("Exp", "Exp(x)", "[B][4]float32"),
		Entry("Log", "Log(p)", "[B][4]float32"),
		Entry("Relu", "Relu(x)", "[B][4]float32"),
		Entry("Abs", "Abs(x)", "[B][4]float32"),
		Entry("Sqrt", "Sqrt(p)", "[B][4]float32"),
		Entry("MatMul", "MatMul(x, Transpose(y))", "[B][B]float32"),
		Entry("Transpose", "Transpose(x)", "[4][B]float32"),
		Entry("Softmax", "Softmax(x, 1)", "[B][4]float32"),
		Entry("Softmax over the batch", "Softmax(x, 0)", "[B][4]float32"),
		Entry("LogSoftmax", "LogSoftmax(x, 1)", "[B][4]float32"),
		Entry("ReduceSum", "Sum(x, 1)", "[B]float32"),
		Entry("ReduceSum keepdims", "Sum(x, 0, true)", "[1][4]float32"),
		Entry("ReduceMean", "Mean(x, 1)", "[B]float32"),
		Entry("ReduceMean keepdims, broadcast back", "x - Mean(x, 1, true)", "[B][4]float32"),
		Entry("ReduceMax", "Max(x, 1)", "[B]float32"),
		Entry("ReduceMax keepdims", "Max(x, 0, true)", "[1][4]float32"),
		Entry("ArgMax with a tie (the first index)", "Argmax(x, 1)", "[B]int64"),
		Entry("ArgMax over the batch", "Argmax(y, 0)", "[4]int64"),
	)

	It("Tanh and Sigmoid agree within the tolerance the default catalog uses, away from the known differences", func() {
		needLibrary()
		src := "package p\n\nfunc f(x [B][4]float32) (t [B][4]float32, s [B][4]float32) {\n\tt = Tanh(x)\n\ts = Sigmoid(x)\n\treturn\n}\n"
		f, prog := compile(src)
		o, err := oracle.Executor{}.Prepare(context.Background(), f, prog)
		Expect(err).NotTo(HaveOccurred())
		in := map[string]*tensor.Tensor{"x": random(4, -4, 4)}
		want, err := o.Run(context.Background(), "f", in)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range both() {
			got, err := run(e, src, "f", in)
			Expect(err).NotTo(HaveOccurred())
			for _, name := range []string{"t", "s"} {
				m := compare.ToOracle(name, want.Outputs[name], got[name], compare.Tolerance{RTol: 1e-4, ATol: 3e-6})
				Expect(m.OK).To(BeTrue(), m.Report)
			}
		}
	})

	It("gives infinities and NaN where the oracle does", func() {
		needLibrary()
		src := "package p\n\nfunc f(x [B][2]float32) (e [B][2]float32, l [B][2]float32, q [B][2]float32) {\n\te = Exp(x)\n\tl = Log(x)\n\tq = Sqrt(x)\n\treturn\n}\n"
		in := map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{100, -1, 0, float32(math.Inf(1))}, 2, 2)}
		for _, e := range both() {
			got, err := run(e, src, "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(math.IsInf(float64(got["e"].F32[0]), 1)).To(BeTrue(), "Exp(100)")
			Expect(math.IsNaN(float64(got["l"].F32[1]))).To(BeTrue(), "Log(-1)")
			Expect(math.IsInf(float64(got["l"].F32[2]), -1)).To(BeTrue(), "Log(0)")
			Expect(math.IsNaN(float64(got["q"].F32[1]))).To(BeTrue(), "Sqrt(-1)")
			Expect(math.IsInf(float64(got["q"].F32[3]), 1)).To(BeTrue(), "Sqrt(+Inf)")
		}
	})
})

package onnx_test

import (
	"fmt"
	"math"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// lower parses, checks and lowers a program.
func lower(name, src string) *ir.Program {
	GinkgoHelper()
	f, err := program.Parse(name, []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return p
}

func floats(shape []int, f func(i int) float32) *tensor.Tensor {
	t := tensor.NewFloat32(shape...)
	for i := range t.F32 {
		t.F32[i] = f(i)
	}
	return t
}

const controlSrc = `package p

func loops(x [B][4]float32, n int64) (y [B][4]float32, k int64) {
	y = x
	k = 0
	for i := range n {
		y = y*2.0 - 1.0
		k = k + i
	}
	return
}

func branch(x [B][3]float32, c int64) (y [B][3]float32, z [B][3]float32) {
	y = x
	z = -x
	if c > 0 {
		y = Tanh(x)
	} else if c < -5 {
		z = x
	}
	return
}

func nested(x [B][2]float32, n int64) (y [B][2]float32) {
	y = x
	for i := range 3 {
		h := y * 0.5
		for j := range n {
			if CheckedRem(i+j, 2) == 0 {
				h = h + 1.0
			}
		}
		y = h
	}
	return
}

func errs(x [B][2]float32, a int64, b int64, n int64) (y [B][2]float32, q int64) {
	y = x
	q = 0
	for i := range n {
		q = CheckedDiv(a, b-i)
		y = y + 1.0
	}
	q = q + CheckedRem(a, b)
	return
}
`

var _ = Describe("Control flow", func() {
	var p *ir.Program
	BeforeEach(func() { p = lower("control.rx", controlSrc) })

	x4 := floats([]int{3, 4}, func(i int) float32 { return float32(i)*0.25 - 1 })
	x3 := floats([]int{2, 3}, func(i int) float32 { return float32(i) - 2.5 })
	x2 := floats([]int{2, 2}, func(i int) float32 { return float32(i) * 0.5 })

	It("writes a for over an int64 input as a Loop whose trip count is the input clamped at 0, and runs zero, one and many trips as rxeq does", func() {
		requireONNX()
		m := readWithPython(export(p, "loops"))
		Expect(ops(m.Graph)).To(Equal([]string{"Max", "Loop"}))
		loop := find(m.Graph, "Loop")
		Expect(find(m.Graph, "Max").Inputs[0]).To(Equal("n"))
		Expect(loop.Inputs[0]).To(Equal(find(m.Graph, "Max").Outputs[0]))
		Expect(loop.Inputs[1]).To(BeEmpty(), "no checked arithmetic: no condition")
		Expect(loop.Outputs).To(Equal([]string{"y", "k"}))
		var cases []evalCase
		for _, n := range []int64{-3, 0, 1, 7} {
			cases = append(cases, evalCase{name: fmt.Sprint("n=", n), p: p, fn: "loops", inputs: map[string]*tensor.Tensor{"x": x4, "n": tensor.Scalar(n)}})
		}
		agree(cases...)
	})

	It("writes a constant trip count as a constant, and a for nested in a for with an if inside", func() {
		requireONNX()
		m := readWithPython(export(p, "nested"))
		Expect(ops(m.Graph)).To(Equal([]string{"Loop"}))
		Expect(find(m.Graph, "Loop").Inputs[0]).To(Equal(find(m.Graph, "Constant").Outputs[0]))
		outer := find(m.Graph, "Loop").Graphs["body"]
		Expect(slices.Contains(ops(outer), "Max")).To(BeTrue(), "the inner trip count is an input")
		Expect(slices.Contains(ops(outer), "Loop")).To(BeTrue())
		inner := find(outer, "Loop").Graphs["body"]
		Expect(slices.Contains(ops(inner), "If")).To(BeTrue())
		var cases []evalCase
		for _, n := range []int64{0, 1, 4} {
			cases = append(cases, evalCase{name: fmt.Sprint("n=", n), p: p, fn: "nested", inputs: map[string]*tensor.Tensor{"x": x2, "n": tensor.Scalar(n)}})
		}
		agree(cases...)
	})

	It("writes an if / else if as nested Ifs whose outputs are the values either branch writes", func() {
		requireONNX()
		m := readWithPython(export(p, "branch"))
		iff := find(m.Graph, "If")
		Expect(iff.Outputs).To(Equal([]string{"y", "z"}))
		Expect(ops(iff.Graphs["else_branch"])).To(Equal([]string{"Less", "If", "Identity"}))
		var cases []evalCase
		for _, c := range []int64{1, 0, -6} {
			cases = append(cases, evalCase{name: fmt.Sprint("c=", c), p: p, fn: "branch", inputs: map[string]*tensor.Tensor{"x": x3, "c": tensor.Scalar(c)}})
		}
		agree(cases...)
	})

	It("gives rxeq's error for division by zero and MinInt64 / -1, keeps the first failure, stops the Loop, and never hands Div such operands", func() {
		requireONNX()
		sig, err := onnx.Describe(p, "errs")
		Expect(err).NotTo(HaveOccurred())
		Expect(sig.Error).To(Equal(onnx.ErrorOutput))
		Expect(sig.Sites).To(HaveLen(2))
		m := readWithPython(export(p, "errs"))
		Expect(m.Graph.Outputs[len(m.Graph.Outputs)-1]).To(Equal(pyValue{Name: "rx_error", Elem: 7, Dims: []string{"3"}}))
		loop := find(m.Graph, "Loop")
		Expect(loop.Inputs[1]).NotTo(BeEmpty(), "the loop stops on the first failure")
		var cases []evalCase
		run := func(a, b, n int64) {
			cases = append(cases, evalCase{name: fmt.Sprintf("a=%d b=%d n=%d", a, b, n), p: p, fn: "errs", inputs: map[string]*tensor.Tensor{"x": x2, "a": tensor.Scalar(a), "b": tensor.Scalar(b), "n": tensor.Scalar(n)}})
		}
		run(7, 3, 2)              // no failure
		run(7, 3, 5)              // b - i is zero at i = 3, inside the loop
		run(7, 0, 0)              // the remainder by zero after the loop
		run(7, 0, 4)              // the first failure (the division) wins over the later one
		run(math.MinInt64, -1, 0) // MinInt64 % -1 is 0
		run(math.MinInt64, -1, 1) // MinInt64 / -1 overflows
		run(math.MinInt64, 1, 3)  // MinInt64 / 1, / 0: division by zero at i = 1
		run(math.MaxInt64, -1, 2) // MaxInt64 / -1, / -2
		run(-9, 4, 2)             // truncation toward zero, remainder with the dividend's sign
	})
})

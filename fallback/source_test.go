package fallback_test

import (
	"context"
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// scoreLinearSrc is the design's example function.
const scoreLinearSrc = `package scoring

const F = 32
const C = 8

func score_linear(x [B][F]float32, w [F][C]float32, b [C]float32) (logits [B][C]float32, probs [B][C]float32, classes [B]int64) {
	logits = MatMul(x, w) + b
	for round_idx := range 4 {
		if CheckedRem(round_idx, 2) == 0 {
			logits = logits * 0.5
		} else {
			logits = Tanh(logits)
		}
	}
	probs = Softmax(logits, 1)
	classes = Argmax(probs, 1)
	return
}
`

// lowerFunc parses, checks and lowers src and returns its function name.
func lowerFunc(src, name string) *ir.Func {
	GinkgoHelper()
	f, err := program.Parse("t.rx", []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	fn := p.Func(name)
	Expect(fn).NotTo(BeNil())
	return fn
}

// scoreInputs draws the design's inputs for a batch.
func scoreInputs(batch int, seed uint64) inputs {
	return inputs{
		"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, seed, batch, 32),
		"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.3}, seed+1, 32, 8),
		"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, seed+2, 8),
	}
}

// scoreLinear64 is an independent float64 evaluation of score_linear,
// written straight from the source's meaning.
func scoreLinear64(in inputs, batch int) (logits, probs []float64, classes []int64) {
	x, w, b := in["x"].Float64s(), in["w"].Float64s(), in["b"].Float64s()
	logits = make([]float64, batch*8)
	probs = make([]float64, batch*8)
	classes = make([]int64, batch)
	for r := range batch {
		row := logits[r*8 : r*8+8]
		for c := range 8 {
			s := 0.0
			for k := range 32 {
				s += x[r*32+k] * w[k*8+c]
			}
			row[c] = s + b[c]
		}
		for round := range 4 {
			for c := range row {
				if round%2 == 0 {
					row[c] *= 0.5
				} else {
					row[c] = math.Tanh(row[c])
				}
			}
		}
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		sum := 0.0
		for c, v := range row {
			probs[r*8+c] = math.Exp(v - m)
			sum += probs[r*8+c]
		}
		best := 0
		for c := range 8 {
			probs[r*8+c] /= sum
			if probs[r*8+c] > probs[r*8+best] {
				best = c
			}
		}
		classes[r] = int64(best)
	}
	return logits, probs, classes
}

var _ = Describe("programs from .rx source", func() {
	// Float32 against float64 on this function: the logits pass through a
	// 32-term dot product and two tanh rounds, so 1e-5 absolute plus 1e-5
	// relative is a comfortable bound (measured error is ~1e-7).
	const atol, rtol = 1e-5, 1e-5

	DescribeTable("score_linear agrees with an independent float64 evaluation",
		func(batch int) {
			fn := lowerFunc(scoreLinearSrc, "score_linear")
			in := scoreInputs(batch, 20261202+uint64(batch))
			before := digest(in)
			out, err := fallback.Run(context.Background(), fn, in)
			Expect(err).NotTo(HaveOccurred())
			Expect(digest(in)).To(Equal(before))
			logits, probs, classes := scoreLinear64(in, batch)
			for name, want := range map[string][]float64{"logits": logits, "probs": probs} {
				got := out[name]
				Expect(got.Shape).To(Equal([]int{batch, 8}))
				for i, w := range want {
					Expect(math.Abs(float64(got.F32[i])-w)).To(BeNumerically("<=", atol+rtol*math.Abs(w)),
						fmt.Sprintf("%s[%d]: got %v want %v", name, i, got.F32[i], w))
				}
			}
			Expect(out["classes"].Shape).To(Equal([]int{batch}))
			for r, c := range classes {
				got := out["classes"].I64[r]
				if got != c {
					// Accept only a near-tie: the two probabilities within tolerance.
					Expect(math.Abs(probs[r*8+int(got)]-probs[r*8+int(c)])).To(BeNumerically("<=", atol),
						fmt.Sprintf("row %d: class %d, want %d", r, got, c))
				}
			}
		},
		Entry("batch 1", 1),
		Entry("batch 16", 16),
		Entry("batch 128", 128),
	)

	It("reports a checked remainder by a zero int64 parameter with the source position", func() {
		fn := lowerFunc(`package p

func phased(x [B][2]float32, rounds int64, phase int64) (y [B][2]float32) {
	y = x
	for round_idx := range rounds {
		if CheckedRem(round_idx, phase) == 0 {
			y = y * 2.0
		}
	}
	return
}
`, "phased")
		out, err := fallback.Run(context.Background(), fn, inputs{
			"x": f32([]float32{1, 2}, 1, 2), "rounds": tensor.Scalar(3), "phase": tensor.Scalar(2)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["y"].F32).To(Equal([]float32{4, 8})) // rounds 0 and 2

		out, err = fallback.Run(context.Background(), fn, inputs{
			"x": f32([]float32{1, 2}, 1, 2), "rounds": tensor.Scalar(-1), "phase": tensor.Scalar(0)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["y"].F32).To(Equal([]float32{1, 2}))

		_, err = fallback.Run(context.Background(), fn, inputs{
			"x": f32([]float32{1, 2}, 1, 2), "rounds": tensor.Scalar(3), "phase": tensor.Scalar(0)})
		expectRuntimeError(err, "phased: CheckedRem: division by zero (round_idx=0) at t.rx:6:6", ir.ErrDivisionByZero)
	})

	It("centres rows with a kept-axis Mean and runs the other ops", func() {
		fn := lowerFunc(`package p

func mix(x [B][3]float32) (c [B][3]float32, s [B]float32, t [3][B]float32, l [B][3]float32, m [B][3]float32) {
	c = x - Mean(x, 1, true)
	s = Sum(Relu(c), 1)
	t = Transpose(Abs(c))
	l = LogSoftmax(x, 1)
	m = Maximum(Sigmoid(x), 0.5) - Minimum(Sqrt(Exp(x)), 1.0)
	return
}
`, "mix")
		out, err := fallback.Run(context.Background(), fn, inputs{"x": f32([]float32{0, 0, 0, 1, 2, 6}, 2, 3)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["c"].F32).To(Equal([]float32{0, 0, 0, -2, -1, 3}))
		Expect(out["s"].F32).To(Equal([]float32{0, 3}))
		Expect(out["t"].Shape).To(Equal([]int{3, 2}))
		Expect(out["t"].F32).To(Equal([]float32{0, 2, 0, 1, 0, 3}))
		Expect(out["l"].F32[0]).To(BeNumerically("~", -math.Log(3), 1e-6))
		// Row 0: Maximum(Sigmoid(0), 0.5) - Minimum(Sqrt(1), 1) = 0.5 - 1.
		Expect(out["m"].F32[:3]).To(Equal([]float32{-0.5, -0.5, -0.5}))
		// x = 2: sigmoid(2) - 1.
		Expect(out["m"].F32[4]).To(BeNumerically("~", 1/(1+math.Exp(-2))-1, 1e-7))
	})
})

var _ = Describe("a loop count the body assigns", func() {
	DescribeTable("is read once, before the first iteration, as in Go",
		func(k int64) {
			fn := lowerFunc(irtest.CountAssignedSource, "f")
			out, err := run(fn, inputs{"x": f32([]float32{0.5, -1}, 2), "k": tensor.Scalar(k)})
			Expect(err).NotTo(HaveOccurred())
			trips, after, added := irtest.CountAssignedWant(k)
			Expect(out["trips"].I64).To(Equal([]int64{trips}))
			Expect(out["after"].I64).To(Equal([]int64{after}))
			Expect(out["y"].F32).To(Equal([]float32{0.5 + added, -1 + added}))
		},
		Entry("k = 3: 5 trips", int64(3)),
		Entry("k = -1: 1 trip", int64(-1)),
		Entry("k = -2: a zero count", int64(-2)),
		Entry("k = -9: a negative count runs no trip", int64(-9)),
	)
})

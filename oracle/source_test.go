package oracle_test

import (
	"context"
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// designSource is the example of DESIGN.md.
const designSource = `//rx:scenario small-batch-scoring
//rx:batches 1 16 128
//rx:seed 20261202
//rx:input x normal(0, 1)
//rx:input w normal(0, 0.3)
//rx:input b uniform(-0.1, 0.1)
package scoring

const F = 32
const C = 8

func score_linear(x [B][F]float32, w [F][C]float32, b [C]float32) (logits [B][C]float32, probs [B][C]float32, classes [B]int64) {
	logits = MatMul(x, w) + b
	for round_idx := range 4 {
		//rx:lock "for (int64_t round_idx = 0; round_idx < 4; round_idx++)"
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

func parseFunc(src, name string) *program.Func {
	f, err := program.Parse("t.rx", []byte(src))
	Expect(err).NotTo(HaveOccurred())
	fn := f.Func(name)
	Expect(fn).NotTo(BeNil())
	return fn
}

// designInputs generates the scenario's inputs for one batch, as the harness does.
func designInputs(batch int) map[string]*tensor.Tensor {
	seed := tensor.DeriveSeed(20261202, "oracle-test")
	return map[string]*tensor.Tensor{
		"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, seed, batch, 32),
		"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.3}, seed+1, 32, 8),
		"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, seed+2, 8),
	}
}

var _ = Describe("programs parsed from .rx source", func() {
	DescribeTable("the DESIGN example agrees with a naive float64 evaluation written out by hand",
		func(batch int) {
			in := designInputs(batch)
			out, err := oracle.Run(context.Background(), parseFunc(designSource, "score_linear"), in)
			Expect(err).NotTo(HaveOccurred())
			x, w, b := in["x"].Float64s(), in["w"].Float64s(), in["b"].Float64s()
			Expect(out["logits"].Shape).To(Equal([]int{batch, 8}))
			Expect(out["classes"].DType).To(Equal(tensor.Int64))
			for r := range batch {
				var logits [8]float64
				for c := range 8 {
					s := 0.0
					for k := range 32 {
						s += x[r*32+k] * w[k*8+c]
					}
					v := s + b[c]
					v = math.Tanh(math.Tanh(v*0.5) * 0.5) // rounds 0..3: *0.5, Tanh, *0.5, Tanh
					logits[c] = v
				}
				m, best := math.Inf(-1), 0
				for c, v := range logits {
					if v > m {
						m, best = v, c
					}
				}
				z := 0.0
				for _, v := range logits {
					z += math.Exp(v - m)
				}
				for c, v := range logits {
					Expect(out["logits"].F64[r*8+c]).To(BeNumerically("~", v, 1e-12))
					Expect(out["probs"].F64[r*8+c]).To(BeNumerically("~", math.Exp(v-m)/z, 1e-12))
				}
				Expect(out["classes"].I64[r]).To(Equal(int64(best)))
			}
		},
		Entry("batch 1", 1),
		Entry("batch 16", 16),
		Entry("batch 128", 128),
	)

	It("pins a CheckedRem error at its source position", func() {
		fn := parseFunc(`package p

func f(phase int64) (r int64) {
	r = 0
	for i := range 5 {
		r = r + CheckedRem(i, phase-i)
	}
	return
}
`, "f")
		_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"phase": tensor.Scalar(3)})
		Expect(err).To(MatchError("f: CheckedRem: division by zero (i=3) at t.rx:6:11"))
		Expect(errors.Is(err, ir.ErrDivisionByZero)).To(BeTrue())
	})

	It("names a literal dividend \"dividend\", not by its own text", func() {
		fn := parseFunc(`package p

func f(d int64) (r int64) {
	r = CheckedDiv(3, d) + CheckedRem((-7), d+1)
	return
}
`, "f")
		_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"d": tensor.Scalar(0)})
		Expect(err).To(MatchError("f: CheckedDiv: division by zero (dividend=3) at t.rx:4:6"))
		_, err = oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"d": tensor.Scalar(-1)})
		Expect(err).To(MatchError("f: CheckedRem: division by zero (dividend=-7) at t.rx:4:25"))
	})

	It("runs a loop bound by an int64 parameter, keepdims centering and a multi-value return", func() {
		fn := parseFunc(`package p

func g(x [B][4]float32, rounds int64) (centered [B][4]float32, total [B]float32, n int64) {
	c := x - Mean(x, 1, true)
	t := Sum(x, -1)
	k := 0
	for i := range rounds {
		if i > 1 && CheckedDiv(10, i-1) > 3 {
			k = k + 1
		} else if !(i == 0) {
			k = k + 10
		}
	}
	return c, t, k
}
`, "g")
		in := map[string]*tensor.Tensor{"x": t32(sh(2, 4), 1, 2, 3, 6, -1, -1, -1, -1), "rounds": tensor.Scalar(4)}
		out, err := oracle.Run(context.Background(), fn, in)
		Expect(err).NotTo(HaveOccurred())
		Expect(out["centered"].F64).To(Equal([]float64{-2, -1, 0, 3, 0, 0, 0, 0}))
		Expect(out["total"].F64).To(Equal([]float64{12, -4}))
		// i=0: nothing; i=1: +10; i=2: 10/1 > 3: +1; i=3: 10/2 = 5 > 3: +1.
		Expect(out["n"].I64).To(Equal([]int64{12}))
		for _, r := range []int64{0, -3} {
			in["rounds"] = tensor.Scalar(r)
			out, err := oracle.Run(context.Background(), fn, in)
			Expect(err).NotTo(HaveOccurred())
			Expect(out["n"].I64).To(Equal([]int64{0}))
		}
	})
})

var _ = Describe("a loop count the body assigns", func() {
	DescribeTable("is read once, before the first iteration, as in Go",
		func(k int64) {
			fn := parseFunc(irtest.CountAssignedSource, "f")
			out, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(2), 0.5, -1), "k": tensor.Scalar(k)})
			Expect(err).NotTo(HaveOccurred())
			trips, after, added := irtest.CountAssignedWant(k)
			Expect(out["trips"].I64).To(Equal([]int64{trips}))
			Expect(out["after"].I64).To(Equal([]int64{after}))
			Expect(out["y"].F64).To(Equal([]float64{0.5 + float64(added), -1 + float64(added)}))
		},
		Entry("k = 3: 5 trips", int64(3)),
		Entry("k = -1: 1 trip", int64(-1)),
		Entry("k = -2: a zero count", int64(-2)),
		Entry("k = -9: a negative count runs no trip", int64(-9)),
	)
})

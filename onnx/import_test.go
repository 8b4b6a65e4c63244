package onnx_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// imported parses an import's program as a scenario, as rxeq run does.
func imported(imp *onnx.Imported) *program.File {
	GinkgoHelper()
	f, err := program.ParseScenario(imp.Func+".rx", imp.Source)
	Expect(err).NotTo(HaveOccurred(), string(imp.Source))
	return f
}

// bitEqual reports whether two output maps hold the same bits.
func bitEqual(want, got map[string]*tensor.Tensor) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d outputs, want %d", len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if g == nil {
			return "no output " + name
		}
		if fmt.Sprint(w.Shape) != fmt.Sprint(g.Shape) || w.DType != g.DType {
			return fmt.Sprintf("%s: %v %v, want %v %v", name, g.DType, g.Shape, w.DType, w.Shape)
		}
		for i := range w.F64 {
			if math.Float64bits(w.F64[i]) != math.Float64bits(g.F64[i]) {
				return fmt.Sprintf("%s[%d]: %v, want %v", name, i, g.F64[i], w.F64[i])
			}
		}
		for i := range w.F32 {
			if math.Float32bits(w.F32[i]) != math.Float32bits(g.F32[i]) {
				return fmt.Sprintf("%s[%d]: %v, want %v", name, i, g.F32[i], w.F32[i])
			}
		}
		for i := range w.I64 {
			if w.I64[i] != g.I64[i] {
				return fmt.Sprintf("%s[%d]: %v, want %v", name, i, g.I64[i], w.I64[i])
			}
		}
	}
	return ""
}

// sameError reports whether two run errors are the same failure: the same
// kind, function, builtin and operand values (the dividend's text and the
// position are the program's own).
func sameError(want, got error) string {
	if (want == nil) != (got == nil) {
		return fmt.Sprintf("error %v, want %v", got, want)
	}
	if want == nil {
		return ""
	}
	var we, ge *ir.RuntimeError
	if !errors.As(want, &we) || !errors.As(got, &ge) || !errors.Is(got, we.Kind) {
		return fmt.Sprintf("error %v, want %v", got, want)
	}
	key := func(e *ir.RuntimeError) string {
		head, _, _ := strings.Cut(e.Error(), " (")
		return head + fmt.Sprint(regexp.MustCompile(`=(-?[0-9]+)`).FindAllString(e.Error(), -1))
	}
	if key(ge) != key(we) {
		return fmt.Sprintf("error %q, want %q", ge.Error(), we.Error())
	}
	return ""
}

// roundTrip exports function fn of f, imports the model and checks that
// the program it gives computes what fn does, bit for bit, under the
// oracle and the fallback, at every batch of f, with the same errors.
func roundTrip(f *program.File, p *ir.Program, fn *program.Func) {
	GinkgoHelper()
	model, err := onnx.Export(p, fn.Name, onnx.Meta{Source: f.Name})
	Expect(err).NotTo(HaveOccurred())
	imp, err := onnx.Import(model, onnx.ImportOptions{Func: fn.Name, Source: fn.Name + ".onnx"})
	Expect(err).NotTo(HaveOccurred(), "%s of %s\n%s", fn.Name, f.Name, f.AST.Name)
	Expect(imp.Weights).To(BeEmpty())
	back := imported(imp)
	lowered, err := program.Lower(back)
	Expect(err).NotTo(HaveOccurred())
	sig, err := onnx.Describe(p, fn.Name)
	Expect(err).NotTo(HaveOccurred())
	Expect(imp.Inputs).To(HaveLen(len(sig.Inputs)))
	batches := f.Batches
	if len(batches) == 0 {
		batches = []int{1}
	}
	for _, batch := range batches {
		in, err := harness.GenerateInputs(f, fn, batch, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		in2 := map[string]*tensor.Tensor{}
		for i, b := range imp.Inputs {
			Expect(b.Model).To(Equal(sig.Inputs[i].Name))
			in2[b.RX] = in[sig.Inputs[i].Value.Name]
		}
		rename := func(out map[string]*tensor.Tensor) map[string]*tensor.Tensor {
			r := map[string]*tensor.Tensor{}
			for i, b := range imp.Outputs {
				Expect(b.Model).To(Equal(sig.Outputs[i].Name))
				r[sig.Outputs[i].Value.Name] = out[b.RX]
			}
			return r
		}
		want, wantErr := oracle.Run(context.Background(), fn, in)
		got, gotErr := oracle.Run(context.Background(), back.Func(fn.Name), in2)
		Expect(sameError(wantErr, gotErr)).To(BeEmpty(), "%s of %s at batch %d\n%s", fn.Name, f.Name, batch, imp.Source)
		if wantErr == nil {
			Expect(bitEqual(want, rename(got))).To(BeEmpty(), "%s of %s at batch %d\n%s", fn.Name, f.Name, batch, imp.Source)
		}
		fwant, fwantErr := fallback.Run(context.Background(), p.Func(fn.Name), in)
		fgot, fgotErr := fallback.Run(context.Background(), lowered.Func(fn.Name), in2)
		Expect(sameError(fwantErr, fgotErr)).To(BeEmpty(), "%s of %s at batch %d", fn.Name, f.Name, batch)
		if fwantErr == nil {
			Expect(bitEqual(fwant, rename(fgot))).To(BeEmpty(), "%s of %s at batch %d\n%s", fn.Name, f.Name, batch, imp.Source)
		}
	}
}

var _ = Describe("Import of what Export writes", func() {
	It("gives back every catalog function (the edge and error scenarios included) with the same outputs, bit for bit, under the oracle and the fallback", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, f := range files {
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			for _, fn := range f.Funcs {
				roundTrip(f, p, fn)
				n++
			}
		}
		Expect(n).To(BeNumerically(">=", 18))
	})

	It("writes the program a person would: the catalog's score_pipeline comes back as written", func() {
		f, err := scenarios.Lookup("reference-scoring")
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		model, err := onnx.Export(p, "score_pipeline", onnx.Meta{Source: f.Name})
		Expect(err).NotTo(HaveOccurred())
		imp, err := onnx.Import(model, onnx.ImportOptions{Source: "score_pipeline.onnx"})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring(`	hidden := MatMul((x-mean)/scale, Transpose(w1)) + b1
	for round_idx := range 4 {
		if CheckedRem(round_idx+phase, 2) == 0 {
			hidden = Relu(hidden)
		} else {
			hidden = Tanh(hidden)
		}
	}
	logits = MatMul(hidden, w2) + b2
	probs = Softmax(logits, 1)
	classes = Argmax(probs, 1)
	return
}
`))
	})

	It("declares an If's output that both branches write when nothing of its type comes before the If (fuzz seed 552)", func() {
		// t8's first value is read by nothing, so the model does not
		// compute it: the import declares t8 with a branch's expression.
		src := `//rx:batches 1 3
//rx:seed 552
//rx:input a0 normal(0, 1)
//rx:input n0a const(1)
package fuzz

const F = 6

func f0(a0 [B][F][F]float32, n0a int64) (out0 [1][F][F]float32) {
	t8 := Sum(a0, 0)
	if n0a == n0a {
		t8 = Log(Sigmoid(Mean(a0, 0)))
	} else {
		t8 = Sigmoid(Transpose(Mean(a0, 0)))
	}
	out0 = t8 + Sum(a0, 0, true)
	return
}
`
		f, err := program.Parse("seed-552.rx", []byte(src))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		roundTrip(f, p, f.Func("f0"))
	})

	// The reduced programs of the round-trip findings of `rxeq fuzz
	// --executors oracle` (seeds 1 to 12000): each came back from its
	// round trip as a program that did not check or computed otherwise.
	DescribeTable("gives back what the fuzzer's round trip caught",
		func(src string) {
			f, err := program.Parse("fuzz.rx", []byte(src))
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			for _, fn := range f.Funcs {
				roundTrip(f, p, fn)
			}
		},
		Entry("seed 4601: an If branch's outputs assigned one after the other, t1 reading the t0 just overwritten", `//rx:batches 1 2
//rx:seed 4601
//rx:input a1 edge(specials)
//rx:input n1a const(1)
package fuzz

const F = 3

func f1(a1 [B][F][F]float32, n1a int64) (out2 [B][F][F]float32) {
	t0 := a1
	t1 := a1
	for range 1 {
		if n1a > 0 {
			t1 = LogSoftmax(t0, 2)
			t0 = Relu(t0)
		}
	}
	out2 = t1
	return
}
`),
		Entry("seed 2750: a checked remainder passed through Identity to a result, declared twice", `//rx:batches 1
//rx:seed 2750
package fuzz

func f0() (cnt int64) {
	k22 := CheckedRem(4, 5)
	cnt = k22
	return
}
`),
		Entry("seed 7570: an If's output declared with the result the same If assigns", `//rx:batches 1 3
//rx:seed 7570
//rx:input a2 uniform(-3, 3)
//rx:input b2 normal(0.5, 2)
//rx:input c2 normal(0.5, 2)
package fuzz

const F = 1

func f2(a2 [B][6]float32, b2 [6][B]float32, c2 [B]float32) (out0 [B][B]float32, out1 [B][B]float32) {
	out1 = MatMul(a2, b2)
	t15 := out1
	if 2 < 9223372036854775807 {
		out1 /= out1
		t15 += t15
	} else if -1 < 1-3 {
	} else {
		t15 += F
		out1 *= c2
	}
	out0 = t15
	return
}
`),
		Entry("seed 26267: an If's output that both branches write, each with statements, and nothing of its type before the If", `//rx:batches 1 2
//rx:seed 26267
//rx:input a0 uniform(-1, 1)
//rx:input b0 normal(0, 0.5)
//rx:input c0 edge(tiny)
//rx:input n0a const(5)
package fuzz

const F = 6

func f0(a0 [B][F][F]float32, b0 [F][F]float32, c0 [F][F]float32, n0a int64) (out0 [F][F]float32) {
	t0 := Max(c0, 0)
	if 2 < n0a {
		t0 = Sum(b0, 1)
		if n0a <= n0a {
			t0 = t0
		}
	} else {
		t0 = Mean(Minimum(Maximum(Exp(LogSoftmax(Max(a0, 1), 0)*32.0), 2.0), 2.0), 0)
	}
	out0 = b0 - t0
	return
}
`),
		Entry("seed 11374: an If's output reusing the variable another output keeps", `//rx:batches 1
//rx:seed 11374
//rx:input a0 normal(0, 0.5)
//rx:input n0a const(2)
package fuzz

func f0(a0 [B][1]float32, n0a int64) (out0 [1][B]float32) {
	t2 := Sum(a0, 0, true)
	out0 = t2
	if !(1 >= n0a) {
		t2 = t2
		out0 = Exp(out0)
	}
	for i4 := range 1 {
		out0 = t2
	}
	return
}
`),
	)

	It("gives back fuzzed programs (every feature, failing checked arithmetic included) the same way", func() {
		n := 0
		for seed := uint64(1); seed <= 200; seed++ {
			gp := fuzz.Generate(seed, fuzz.Config{})
			// Fuzzed programs may declare locals nothing reads: program.Parse, as
			// the fuzzer does, not ParseScenario.
			f, err := program.Parse(fmt.Sprintf("fuzz-%d.rx", seed), gp.Source)
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			for _, fn := range f.Funcs {
				roundTrip(f, p, fn)
				n++
			}
		}
		Expect(n).To(BeNumerically(">=", 200))
	})
})

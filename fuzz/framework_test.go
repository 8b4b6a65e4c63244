package fuzz_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// reporting is skewed whose prepared programs say which framework runs
// them, as the ONNX Runtime and Python executors do.
type reporting struct {
	skewed
	framework string
}

func (r reporting) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := r.skewed.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	return reportingPrepared{Prepared: inner, framework: r.framework}, nil
}

type reportingPrepared struct {
	executor.Prepared
	framework string
}

func (p reportingPrepared) Framework() string { return p.framework }

var _ = Describe("the framework behind a finding", func() {
	wrong := reporting{skewed: skewed{name: "numpy", delta: 0.5}, framework: "numpy 1.24.2, python 3.11.2"}

	It("is what the executor's prepared program reports, on the report and on each finding", func() {
		rep, err := (&fuzz.Checker{Executors: []executor.Executor{wrong}}).Check(context.Background(), []byte(rowsProgram))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Frameworks).To(HaveKeyWithValue(executor.Name("numpy"), "numpy 1.24.2, python 3.11.2"))
		Expect(rep.Findings).NotTo(BeEmpty())
		for _, f := range rep.Findings {
			Expect(f.Framework).To(Equal("numpy 1.24.2, python 3.11.2"))
		}
	})

	It("gates the ledger's entries by their version range when their programs are checked", func() {
		entry := func(versions string) *ledger.Ledger {
			return &ledger.Ledger{Schema: ledger.Schema, Entries: []ledger.Entry{{ID: "numpy-off", Executor: "numpy",
				Versions: versions, Category: "accuracy", Explanation: "off by a half", Program: "p.rx"}}}
		}
		version := func(_ executor.Name, reported string) (string, string) {
			if reported == "" {
				return "NumPy", ""
			}
			return "NumPy", "1.24.2"
		}
		read := func(string) ([]byte, error) { return []byte(rowsProgram), nil }
		chk := &fuzz.Checker{Executors: []executor.Executor{wrong}}
		in, err := fuzz.CheckLedger(context.Background(), chk, entry(">=1.24 <2.0"), version, read)
		Expect(err).NotTo(HaveOccurred())
		Expect(in).To(HaveLen(1))
		Expect(in[0].Status).To(Equal(fuzz.StatusXFail))
		out, err := fuzz.CheckLedger(context.Background(), chk, entry(">=2.0"), version, read)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(BeEmpty(), "an entry for NumPy 2 does not hold for the reported 1.24.2")
	})
})

var _ = Describe("Reclassify", func() {
	// flipsInf turns every +Inf into -Inf: 1.0 / Relu(x) then disagrees
	// with the oracle as +Inf against -Inf where x <= 0.
	flipsInf := tampered{name: "flips-inf", edit: func(t *tensor.Tensor) {
		for i, v := range t.F32 {
			if math.IsInf(float64(v), 1) {
				t.F32[i] = float32(math.Inf(-1))
			}
		}
	}}
	const small = `//rx:scenario small
//rx:batches 1
//rx:seed 3
//rx:input x normal(0, 1)
package p

func f(x [B][16]float32) (out [B][16]float32) {
	out = 1.0 / Relu(x)
	return
}
`

	It("gives a finding the value class its reduced program shows", func() {
		chk := &fuzz.Checker{Executors: []executor.Executor{flipsInf}}
		rep, err := chk.Check(context.Background(), []byte(small))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).NotTo(BeEmpty())
		f := rep.Findings[0]
		Expect(f.Values).To(Equal(fuzz.ValOppositeInf))
		// As the unreduced program's finding might have it.
		f.Values, f.Shape = fuzz.ValInf, "rank 2, rows of 40 (4k+0, 8k+0, 16k+8)"
		g := fuzz.Reclassify(context.Background(), []byte(small), f, chk)
		Expect(g.Values).To(Equal(fuzz.ValOppositeInf))
		Expect(g.Shape).To(Equal("rank 2, rows of 16 (4k+0, 8k+0, 16k+0)"))
		Expect(g.Signature()).To(Equal(f.Signature()))
	})

	It("leaves a finding alone when the program does not show it", func() {
		chk := &fuzz.Checker{Executors: []executor.Executor{flipsInf}}
		f := fuzz.Finding{Kind: fuzz.KindMismatch, Reference: "oracle", Executor: "flips-inf", Func: "f", Output: "out", Values: fuzz.ValInf}
		Expect(fuzz.Reclassify(context.Background(), []byte(rowsProgram), f, chk)).To(Equal(f))
	})
})

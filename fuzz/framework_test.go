package fuzz_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
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

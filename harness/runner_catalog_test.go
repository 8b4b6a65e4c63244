package harness_test

import (
	"bytes"
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

var _ = Describe("The built-in catalog", func() {
	ctx := context.Background()
	var files []*program.File
	BeforeEach(func() {
		var err error
		files, err = scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
	})

	It("passes through the oracle and the fallback", func() {
		res, err := harness.Run(ctx, files, harness.Options{Executors: []executor.Executor{fallback.Executor{}}, SkipLocks: true})
		Expect(err).NotTo(HaveOccurred())
		// Groups: edge 5 functions × 3 batches, error 1 × 2, reference
		// 3 × 3, rounds 2 × 3.
		Expect(res.Cases).To(HaveLen(218)) // and row-tiles 10 × 3
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusPass), c.Name()+": "+c.Message)
		}
	})

	It("passes through all three executors with every lock holding", Label("native"), func() {
		// The oracle, fallback and native; with torch (the default set when
		// libtorch is installed) see executor_torch_test.go.
		res, err := harness.Run(ctx, files, harness.Options{Executors: []executor.Executor{fallback.Executor{}, native.Executor{}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(327))
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusPass), c.Name()+": "+c.Message)
			Expect(c.Path).To(Equal(c.Executor), "forced native never runs elsewhere")
		}
		var locked []string
		for _, l := range res.Locks {
			Expect(l.OK()).To(BeTrue(), l.Function+": "+l.Error+l.Result.Message)
			Expect(l.Duration).To(BeNumerically(">", 0), "a lock's check takes time, and the report says how long")
			locked = append(locked, l.Scenario+"/"+l.Function)
		}
		Expect(locked).To(Equal([]string{
			"reference-scoring/score_linear", "reference-scoring/score_mlp", "reference-scoring/score_pipeline",
			"parameter-rounds/score_rounds", "parameter-rounds/score_countdown",
		}))
		for _, c := range res.Cases {
			if c.Scenario == "remainder-by-zero" {
				Expect(c.Error).To(Equal("score_divisor: CheckedRem: division by zero (round_idx=0) at scenarios/error.rx:21:6"))
			}
		}
		natives := 0
		for _, p := range res.Preparations {
			if p.Executor == "native" {
				natives++
				Expect(p.Error).To(BeEmpty())
				Expect(p.Compiler).NotTo(BeEmpty())
			}
		}
		Expect(natives).To(Equal(len(files)))
	})

	It("locks the reference functions on their loop and their if, each in its own body", func() {
		f, err := scenarios.Lookup("reference-scoring")
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		src, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		for _, fn := range f.Funcs {
			Expect(lock.Check(src, native.CFuncName(fn.Name), fn.Locks).OK).To(BeTrue(), fn.Name)
		}
		// A loop that runs three rounds, or an if that is no longer there,
		// breaks every function's lock.
		fewer := bytes.ReplaceAll(src, []byte("round_idx < 4;"), []byte("round_idx < 3;"))
		noIf := bytes.ReplaceAll(src, []byte("if (rx_t"), []byte("while (rx_t"))
		for _, fn := range f.Funcs {
			Expect(lock.Check(fewer, native.CFuncName(fn.Name), fn.Locks).OK).To(BeFalse(), fn.Name)
			Expect(lock.Check(noIf, native.CFuncName(fn.Name), fn.Locks).OK).To(BeFalse(), fn.Name)
		}
		// score_pipeline's routing (Relu, else, Tanh) is locked too.
		swapped := bytes.ReplaceAll(src, []byte("rx_relu(&rx_c, "), []byte("rx_abs(&rx_c, "))
		Expect(lock.Check(swapped, native.CFuncName("score_pipeline"), f.Func("score_pipeline").Locks).OK).To(BeFalse())
	})
})

package fuzz_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program/ir"
)

const twoFuncs = `//rx:scenario two
//rx:batches 1 4
//rx:seed 7
//rx:input x normal(0, 1)
//rx:input w normal(0, 1)
//rx:input n const(3)
package p

const F = 3

func plain(x [B][F]float32) (y [B][F]float32) {
	y = x * 2.0
	return
}

func squashed(w [B][F]float32, n int64) (probs [B][F]float32, classes [B]int64) {
	probs = Tanh(w)
	for i := range n {
		if CheckedRem(i, 2) == 0 {
			probs = probs * 0.5
		}
	}
	probs = Softmax(probs, 1)
	classes = Argmax(probs, 1)
	return
}
`

var _ = Describe("Check", func() {
	ctx := context.Background()

	It("finds no disagreement between oracle and fallback on a correct program", func() {
		rep, err := fuzz.Check(ctx, []byte(twoFuncs))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(BeEmpty())
		Expect(rep.OK()).To(BeTrue())
		Expect(rep.Runs).To(Equal(2 * 2 * 2)) // 2 functions × 2 batches × (oracle + fallback)
	})

	It("names the executor, function, batch and output of a value disagreement", func() {
		sk := skewed{name: "skewed", delta: 0.01}
		rep, err := fuzz.Check(ctx, []byte(twoFuncs), sk)
		Expect(err).NotTo(HaveOccurred())
		// plain.y at 2 batches, squashed.probs at 2 batches (classes only shift by a constant: same argmax).
		Expect(rep.Findings).To(HaveLen(4))
		f := rep.Findings[0]
		Expect(f.Kind).To(Equal(fuzz.KindMismatch))
		Expect(f.Reference).To(Equal(executor.Name("oracle")))
		Expect(f.Executor).To(Equal(executor.Name("skewed")))
		Expect(f.Func).To(Equal("plain"))
		Expect(f.Batch).To(Equal(1))
		Expect(f.Output).To(Equal("y"))
		Expect(f.Detail).To(ContainSubstring("y: 3 / 3 mismatched"))
		Expect(f.String()).To(HavePrefix("skewed vs oracle: mismatch in plain batch 1: y: 3 / 3 mismatched"))
		Expect(rep.Findings[2].Func).To(Equal("squashed"))
		Expect(rep.Findings[2].Output).To(Equal("probs"))
		Expect(rep.Has(f.Signature())).To(BeTrue())
	})

	It("reports a missing and an undeclared output in the runner's words (compare.Outputs)", func() {
		rep, err := fuzz.Check(ctx, []byte(twoFuncs), reshaped{drop: "y"})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(HaveLen(2)) // plain at 2 batches
		f := rep.Findings[0]
		Expect(f.Kind).To(Equal(fuzz.KindProblem))
		Expect(f.Output).To(Equal("y"))
		Expect(f.Detail).To(Equal("y: missing: the executor returned no output y"))

		rep, err = fuzz.Check(ctx, []byte(twoFuncs), reshaped{add: "extra"})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(HaveLen(4)) // 2 functions at 2 batches
		f = rep.Findings[0]
		Expect(f.Kind).To(Equal(fuzz.KindProblem))
		Expect(f.Output).To(Equal("extra"))
		Expect(f.Detail).To(Equal("the executor returned outputs the function does not declare: extra"))
	})

	It("accepts a perturbation within the tolerance", func() {
		// The default is atol 3e-6 + rtol 1e-4·|want|: 2e-6 passes even
		// where want is 0.
		rep, err := fuzz.Check(ctx, []byte(twoFuncs), skewed{name: "skewed", delta: 2e-6})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
	})

	It("reports an error the oracle does not raise, with its kind", func() {
		rep, err := fuzz.Check(ctx, []byte(twoFuncs), skewed{name: "skewed", err: errSkewed})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(HaveLen(4))
		f := rep.Findings[0]
		Expect(f.Kind).To(Equal(fuzz.KindError))
		Expect(f.RefKind).To(BeEmpty())
		Expect(f.GotKind).To(Equal("unclassified"))
		Expect(f.GotError).To(Equal("skewed failure"))
		Expect(f.Detail).To(ContainSubstring("the oracle succeeded but the executor failed"))
	})

	It("tells a segfault from an abort and from other failures of an isolated run", func() {
		// As an isolated run fails: "native crashed: signal SIGSEGV",
		// wrapping executor.ErrCrashed.
		crash := func(sig string) skewed {
			return skewed{name: "native", err: fmt.Errorf("native %w: signal %s\nworker stderr (tail):\n%s at 0x7f00", executor.ErrCrashed, sig, sig)}
		}
		timeout := skewed{name: "native", err: fmt.Errorf("native %w after 10s", executor.ErrTimedOut)}
		kinds := map[string]fuzz.Signature{}
		crashes := map[string]bool{}
		for _, ex := range []skewed{crash("SIGSEGV"), crash("SIGABRT"), timeout, {name: "native", err: errSkewed}} {
			rep, err := fuzz.Check(ctx, []byte(twoFuncs), ex)
			Expect(err).NotTo(HaveOccurred())
			f := rep.Findings[0]
			kinds[f.GotKind] = f.Signature()
			crashes[f.GotKind] = f.Crashed
		}
		Expect(kinds).To(HaveLen(4))
		Expect(crashes).To(Equal(map[string]bool{
			"native crashed: signal SIGSEGV": true,
			"native crashed: signal SIGABRT": true,
			"native timed out after 10s":     true,
			"unclassified":                   false,
		}))
	})

	It("records a crash by its error, whatever its text says", func() {
		// Crashed comes from errors.Is, not from the words: an error that
		// reads like a crash is not one, a crash of an external executor is.
		rep, err := fuzz.Check(ctx, []byte(twoFuncs), skewed{name: "native", err: errors.New("native crashed: signal SIGSEGV")})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings[0].Crashed).To(BeFalse())
		Expect(rep.Findings[0].GotKind).To(Equal("unclassified"))

		rep, err = fuzz.Check(ctx, []byte(twoFuncs), skewed{name: "mine", err: fmt.Errorf("mine %w: exit status 3", executor.ErrCrashed)})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings[0].Crashed).To(BeTrue())
		Expect(rep.Findings[0].GotKind).To(Equal("mine crashed: exit status 3"))
	})

	It("marks a reference that crashed", func() {
		c := &fuzz.Checker{Reference: skewed{name: "oracle", err: fmt.Errorf("oracle %w after 1s", executor.ErrTimedOut)}}
		rep, err := c.Check(ctx, []byte(twoFuncs))
		Expect(err).NotTo(HaveOccurred())
		f := rep.Findings[0]
		Expect(f.Kind).To(Equal(fuzz.KindReference))
		Expect(f.Crashed).To(BeTrue())
		Expect(f.RefKind).To(Equal("oracle timed out after 1s"))
	})

	It("gives preparation errors and panics a signature that survives shrinking", func() {
		sig := func(kind fuzz.Kind, detail string) fuzz.Signature {
			return fuzz.Finding{Kind: kind, Reference: "oracle", Executor: "native", Detail: detail}.Signature()
		}
		compile := func(dir string, line int, msg string) string {
			return fmt.Sprintf("native build: CC=\"cc\" failed on /tmp/rxeq-stage-%s/rx_program.c: exit status 1\n"+
				"In file included from rx_program.c:3:\n/tmp/rxeq-stage-%s/rx_program.c:%d:7: error: %s\n  %d | x\n", dir, dir, line, msg, line)
		}
		a := sig(fuzz.KindPrepare, compile("123", 40, "comparison of the same expression [-Werror=tautological-compare]"))
		b := sig(fuzz.KindPrepare, compile("98765", 12, "comparison of the same expression [-Werror=tautological-compare]"))
		c := sig(fuzz.KindPrepare, compile("123", 40, "expected expression before ',' token"))
		Expect(a).To(Equal(b))
		Expect(a).NotTo(Equal(c))
		Expect(a.PanicOrPrepareText).To(Equal("error: comparison of the same expression [-Werror=tautological-compare]"))

		load := sig(fuzz.KindPrepare, "native build: dlopen /home/u/.cache/rxeq/ab12cd.so: undefined symbol: rx_missing")
		Expect(load.PanicOrPrepareText).To(Equal("native build: dlopen PATH: undefined symbol: rx_missing"))

		p1 := sig(fuzz.KindPanic, "panic: runtime error: index out of range [5] with length 3\ngoroutine 7 [running]:")
		p2 := sig(fuzz.KindPanic, "panic: runtime error: index out of range [2] with length 1")
		Expect(p1).To(Equal(p2))
		Expect(p1.PanicOrPrepareText).To(Equal("panic: runtime error: index out of range [N] with length N"))
	})

	It("turns a panic into a finding", func() {
		rep, err := fuzz.Check(ctx, []byte(twoFuncs), skewed{name: "skewed", panics: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).NotTo(BeEmpty())
		Expect(rep.Findings[0].Kind).To(Equal(fuzz.KindPanic))
		Expect(rep.Findings[0].Detail).To(Equal("panic: skewed executor"))
	})

	It("accepts the same runtime error from both executors", func() {
		src := `//rx:input n const(0)
package p

func f(n int64) (k int64) {
	k = CheckedDiv(7, n)
	return
}
`
		rep, err := fuzz.Check(ctx, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
		Expect(rep.Runs).To(Equal(2))

		other := skewed{name: "skewed", err: &ir.RuntimeError{Func: "f", Kind: ir.ErrOverflow, Detail: "CheckedDiv: overflow"}}
		rep, err = fuzz.Check(ctx, []byte(src), other)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(HaveLen(1))
		Expect(rep.Findings[0].Kind).To(Equal(fuzz.KindError))
		Expect(rep.Findings[0].RefKind).To(Equal(ir.ErrDivisionByZero.Error()))
		Expect(rep.Findings[0].GotKind).To(Equal(ir.ErrOverflow.Error()))
	})

	It("uses the given tolerance and batches", func() {
		c := &fuzz.Checker{Executors: []executor.Executor{skewed{name: "skewed", delta: 0.01}},
			Tolerance: &compare.Tolerance{ATol: 0.02}, Batches: []int{2}}
		rep, err := c.Check(ctx, []byte(twoFuncs))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
		Expect(rep.Runs).To(Equal(4))
	})

	It("rejects a program that does not check", func() {
		_, err := fuzz.Check(ctx, []byte("package p\nfunc f(x [B]float64) (y [B]float64) { y = x; return }\n"))
		Expect(errors.Is(err, fuzz.ErrProgram)).To(BeTrue())
	})

	It("finds no disagreement on a few hundred generated programs", func() {
		for seed := range uint64(300) {
			p := fuzz.Generate(seed, fuzz.Config{})
			rep, err := fuzz.Check(ctx, p.Source)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Findings).To(BeEmpty(), "seed %d:\n%s", seed, p.Source)
		}
	})
})

var _ = Describe("Check's memory budget", func() {
	It("refuses a program whose function needs more than the budget before allocating its inputs", func() {
		src, err := os.ReadFile("../harness/testdata/memory/big_batch.rx")
		Expect(err).NotTo(HaveOccurred())
		c := fuzz.Checker{MaxMemory: 1 << 30}
		_, err = c.Check(context.Background(), src)
		Expect(errors.Is(err, harness.ErrMemory)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("score at batch 16777216 needs "))
		Expect(err.Error()).To(ContainSubstring("but the memory budget is 1.0 GiB"))
	})

	It("checks a program that fits, and refuses batches above harness.MaxBatch", func() {
		c := fuzz.Checker{MaxMemory: 1 << 30}
		rep, err := c.Check(context.Background(), []byte(twoFuncs))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
		c.Batches = []int{harness.MaxBatch + 1}
		_, err = c.Check(context.Background(), []byte(twoFuncs))
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), "%v", err)
	})
})

package fuzz_test

import (
	"context"
	"errors"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
)

// withCtx adapts a predicate that needs no context to Reduce.
func withCtx(f func([]byte) bool) func(context.Context, []byte) bool {
	return func(_ context.Context, b []byte) bool { return f(b) }
}

// firstSeed returns the first seed whose generated program satisfies ok.
func firstSeed(cfg fuzz.Config, ok func(fuzz.Program) bool) fuzz.Program {
	for seed := range uint64(1000) {
		if p := fuzz.Generate(seed, cfg); ok(p) {
			return p
		}
	}
	Fail("no seed in 1000 satisfies the condition")
	return fuzz.Program{}
}

var _ = Describe("Reduce", func() {
	ctx := context.Background()
	// Without forlocal: the programs these specs were written against
	// (a program without it is what it was before the feature).
	big := fuzz.Config{MaxFuncs: 3, MaxStmts: 10, Exclude: fuzz.FeatForLocal}

	It("shrinks a program to the part a synthetic predicate needs", func() {
		p := firstSeed(big, func(p fuzz.Program) bool {
			return fileHasTanhOfRank2(p.Source) && fuzz.CountStmts(p.Source) > 25
		})
		small, st, err := fuzz.Reduce(ctx, p.Source, withCtx(fileHasTanhOfRank2))
		Expect(err).NotTo(HaveOccurred())
		Expect(fileHasTanhOfRank2(small)).To(BeTrue())
		_, err = program.Parse("small.rx", small)
		Expect(err).NotTo(HaveOccurred())
		Expect(fuzz.CountStmts(small)).To(BeNumerically("<=", 5), "reduced to:\n%s", small)
		Expect(st.Accepted).To(BeNumerically(">", 0))
		Expect(len(small)).To(BeNumerically("<", len(p.Source)/3))
		GinkgoWriter.Printf("%d -> %d statements in %d tries:\n%s\n", fuzz.CountStmts(p.Source), fuzz.CountStmts(small), st.Tries, small)
	})

	It("keeps a disagreement's signature while shrinking it", func() {
		sk := skewed{name: "skewed", delta: 0.01, trigger: hasTanhOfRank2}
		c := &fuzz.Checker{Executors: []executor.Executor{sk}}
		var finding fuzz.Finding
		p := firstSeed(big, func(p fuzz.Program) bool {
			rep, err := c.Check(ctx, p.Source)
			if err != nil || rep.OK() || fuzz.CountStmts(p.Source) < 20 {
				return false
			}
			finding = rep.Findings[0]
			return finding.Kind == fuzz.KindMismatch
		})
		small, _, err := fuzz.ReduceFinding(ctx, p.Source, finding, c)
		Expect(err).NotTo(HaveOccurred())
		Expect(fuzz.CountStmts(small)).To(BeNumerically("<=", 5), "reduced to:\n%s", small)
		rep, err := c.Check(ctx, small)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Has(finding.Signature())).To(BeTrue())
		f, err := program.Parse("small.rx", small)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Funcs).To(HaveLen(1))
		Expect(f.Funcs[0].Name).To(Equal(finding.Func))
		Expect(f.Batches).To(Equal([]int{1}))
	})

	It("builds the candidates it tests ahead, in batches, and reduces to the same program as without", func() {
		sk := skewed{name: "skewed", delta: 0.01, trigger: hasTanhOfRank2}
		pb := &prebuildingSkewed{skewed: sk}
		c := &fuzz.Checker{Executors: []executor.Executor{pb}, Metamorphic: 1}
		var finding fuzz.Finding
		p := firstSeed(big, func(p fuzz.Program) bool {
			rep, err := c.Check(ctx, p.Source)
			if err != nil || rep.OK() || fuzz.CountStmts(p.Source) < 20 {
				return false
			}
			finding = rep.Findings[0]
			return true
		})
		pb.prebuilt, pb.prepared, pb.builds = nil, nil, nil
		small, st, err := fuzz.ReduceFinding(ctx, p.Source, finding, c)
		Expect(err).NotTo(HaveOccurred())
		plain := &fuzz.Checker{Executors: []executor.Executor{sk}, Metamorphic: 1}
		want, _, err := fuzz.ReduceFinding(ctx, p.Source, finding, plain)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(small)).To(Equal(string(want)))

		Expect(pb.prepared).To(HaveLen(st.Tested), "no variants: a mismatch cannot come from them")
		prebuilt := map[string]bool{}
		for _, s := range pb.prebuilt {
			prebuilt[s] = true
		}
		missed := 0
		for _, s := range pb.prepared {
			if !prebuilt[s] {
				missed++
			}
		}
		Expect(missed).To(BeNumerically("<=", 1), "only the canonical form of the input is tested unbuilt")
		GinkgoWriter.Printf("tested %d accepted %d builds %v\n", st.Tested, st.Accepted, pb.builds)
		Expect(len(pb.builds)).To(BeNumerically("<", st.Tested/2), "candidates are built several at a time")
		Expect(slices.Max(pb.builds)).To(BeNumerically("<=", 16))
	})

	It("runs candidates only through the executor that disagreed", func() {
		sk := skewed{name: "skewed", delta: 0.01, trigger: hasTanhOfRank2}
		other := &counting{Executor: fallback.Executor{}}
		c := &fuzz.Checker{Executors: []executor.Executor{other, sk}}
		var finding fuzz.Finding
		p := firstSeed(big, func(p fuzz.Program) bool {
			rep, err := c.Check(ctx, p.Source)
			if err != nil || rep.OK() {
				return false
			}
			finding = rep.Findings[0]
			return true
		})
		Expect(finding.Executor).To(Equal(executor.Name("skewed")))
		before := other.prepared
		_, st, err := fuzz.ReduceFinding(ctx, p.Source, finding, c)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Tested).To(BeNumerically(">", 0))
		Expect(other.prepared).To(Equal(before), "the executor that agreed was run during the reduction")
	})

	It("drops the directives of parameters it removes", func() {
		src := []byte(`//rx:batches 1 3
//rx:input x normal(0, 1)
//rx:input unused uniform(0, 1)
//rx:input n const(2)
package p

const F = 4

func f(x [B][F]float32, unused [F]float32, n int64) (y [B][F]float32, z [B]float32) {
	t := Exp(x)
	for i := range n {
		t = t * 0.5
	}
	y = Tanh(x)
	z = Sum(t, 1)
	return
}
`)
		small, _, err := fuzz.Reduce(ctx, src, withCtx(fileHasTanhOfRank2))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(small)).To(Equal(`//rx:batches 1
//rx:input x normal(0, 1)
package p

const F = 1

func f(x [B][F]float32) (y [B][F]float32) {
	y = Tanh(x)
	return
}
`))
	})

	It("returns the program unchanged when nothing smaller fails", func() {
		src := []byte("//rx:input x normal(0, 1)\npackage p\n\nfunc f(x [2][2]float32) (y [2][2]float32) {\n\ty = Tanh(x)\n\treturn\n}\n")
		small, _, err := fuzz.Reduce(ctx, src, func(_ context.Context, b []byte) bool { return string(b) == string(src) })
		Expect(err).NotTo(HaveOccurred())
		Expect(small).To(Equal(src))
	})

	It("rejects a program that does not check and stops when the context ends", func() {
		_, _, err := fuzz.Reduce(ctx, []byte("package p\nfunc f() {}\n"), func(context.Context, []byte) bool { return true })
		Expect(errors.Is(err, fuzz.ErrProgram)).To(BeTrue())

		done, cancel := context.WithCancel(ctx)
		cancel()
		p := fuzz.Generate(1, big)
		_, _, err = fuzz.Reduce(done, p.Source, func(context.Context, []byte) bool { return true })
		Expect(errors.Is(err, context.Canceled)).To(BeTrue())
	})

	Describe("a budget", func() {
		It("stops after MaxTests candidates with the smallest failing program so far", func() {
			p := fuzz.Generate(1, big)
			tested := 0
			small, st, err := fuzz.Reducer{MaxTests: 3}.Reduce(ctx, p.Source, func(context.Context, []byte) bool {
				tested++
				return true
			})
			Expect(errors.Is(err, fuzz.ErrBudget)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("3 candidates tested"))
			Expect(tested).To(Equal(3))
			Expect(st.Tested).To(Equal(3))
			Expect(st.Accepted).To(BeNumerically(">=", 1))
			_, perr := program.Parse("small.rx", small)
			Expect(perr).NotTo(HaveOccurred())
			Expect(fuzz.CountStmts(small)).To(BeNumerically("<", fuzz.CountStmts(p.Source)))
		})

		It("cancels the check running when MaxTime is spent and keeps the last failing program", func() {
			p := fuzz.Generate(1, big)
			var sawCancel bool
			small, st, err := fuzz.Reducer{MaxTime: 50 * time.Millisecond}.Reduce(ctx, p.Source, func(c context.Context, b []byte) bool {
				<-c.Done() // a check that only the budget ends
				sawCancel = true
				return true
			})
			Expect(errors.Is(err, fuzz.ErrBudget)).To(BeTrue(), "%v", err)
			Expect(errors.Is(err, context.DeadlineExceeded)).To(BeFalse())
			Expect(err.Error()).To(ContainSubstring("50ms of reduction time"))
			Expect(sawCancel).To(BeTrue())
			Expect(st.Accepted).To(Equal(0), "a check cut short must not count as failing")
			Expect(small).To(Equal(p.Source))
		})

		It("reports the caller's cancellation, not the budget, when ctx ends first", func() {
			p := fuzz.Generate(1, big)
			c, cancel := context.WithCancel(ctx)
			_, _, err := fuzz.Reducer{MaxTime: time.Hour, MaxTests: 1000}.Reduce(c, p.Source, func(context.Context, []byte) bool {
				cancel()
				return true
			})
			Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
			Expect(errors.Is(err, fuzz.ErrBudget)).To(BeFalse())
		})
	})
})

var _ = Describe("the checker that reduces a finding", func() {
	pooled, own := &fuzz.Checker{}, &fuzz.Checker{}
	It("starts a worker per candidate for a crash or a timeout, which would not share one anyway", func() {
		for _, kind := range []string{"native crashed: signal SIGSEGV", "native timed out after 10s", "torch crashed: signal SIGSEGV"} {
			f := fuzz.Finding{Kind: fuzz.KindError, GotKind: kind, Crashed: true}
			Expect(fuzz.ReduceChecker(f, pooled, own)).To(BeIdenticalTo(own), kind)
		}
	})
	It("reuses the pooled worker for any other finding, whatever its texts say", func() {
		Expect(fuzz.ReduceChecker(fuzz.Finding{Kind: fuzz.KindMismatch, Output: "y"}, pooled, own)).To(BeIdenticalTo(pooled))
		Expect(fuzz.ReduceChecker(fuzz.Finding{Kind: fuzz.KindError, GotKind: "division by zero"}, pooled, own)).To(BeIdenticalTo(pooled))
		Expect(fuzz.ReduceChecker(fuzz.Finding{Kind: fuzz.KindError, GotKind: "native crashed: signal SIGSEGV"}, pooled, own)).To(BeIdenticalTo(pooled))
	})
})

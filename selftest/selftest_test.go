package selftest_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/selftest"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("selftest", func() {
	ctx := context.Background()
	catalog := func() []*program.File {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		return files
	}

	It("catches every built-in mutant on the catalog", func() {
		outs, err := selftest.Run(ctx, catalog(), selftest.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(outs).To(HaveLen(len(selftest.Mutants())))
		for _, o := range outs {
			Expect(o.Verdict).To(Equal(selftest.Caught), o.Mutant.Name)
			Expect(o.Flagged).To(Equal(o.Broken), "%s: every broken case is flagged", o.Mutant.Name)
			Expect(o.Example).NotTo(BeEmpty())
		}
	})

	It("fails when a mutant breaks nothing the comparison can see, and says which", func() {
		harmless := selftest.Mutant{Name: "harmless", What: "claims to break but changes nothing",
			Break: func(*program.Func, map[string]*tensor.Tensor, *executor.Outcome, *error, compare.Tolerance) bool {
				return true
			}}
		idle := selftest.Mutant{Name: "idle", What: "never finds anything to break",
			Break: func(*program.Func, map[string]*tensor.Tensor, *executor.Outcome, *error, compare.Tolerance) bool {
				return false
			}}
		outs, err := selftest.Run(ctx, catalog(), selftest.Options{Mutants: []selftest.Mutant{harmless, idle, selftest.Mutants()[0]}})
		Expect(err).To(MatchError(selftest.ErrNotCaught))
		Expect(err.Error()).To(MatchRegexp(`harmless \(escaped: 0 of \d+ broken cases flagged\), idle \(not exercised: 0 of 0 broken cases flagged\)`))
		Expect(outs[0].Verdict).To(Equal(selftest.Escaped))
		Expect(outs[0].Broken).To(BeNumerically(">", 0))
		Expect(outs[1].Verdict).To(Equal(selftest.NotExercised))
		Expect(outs[2].Verdict).To(Equal(selftest.Caught))
	})

	It("counts a class flip in a row other than the first", func() {
		var flip selftest.Mutant
		for _, m := range selftest.Mutants() {
			if m.Name == "class-flip" {
				flip = m
			}
		}
		outs, err := selftest.Run(ctx, catalog(), selftest.Options{Mutants: []selftest.Mutant{flip}, Harness: harness.Options{Batches: []int{16}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(outs[0].Example).To(MatchRegexp(`first mismatches: \[15\]`))
	})
})

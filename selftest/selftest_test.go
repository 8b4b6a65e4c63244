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
			Break: func(*program.Func, map[string]*tensor.Tensor, *executor.Outcome, *error, func(string) compare.Tolerance) bool {
				return true
			}}
		idle := selftest.Mutant{Name: "idle", What: "never finds anything to break",
			Break: func(*program.Func, map[string]*tensor.Tensor, *executor.Outcome, *error, func(string) compare.Tolerance) bool {
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

var _ = Describe("selftest on a user's files", func() {
	ctx := context.Background()
	parse := func(src string) *program.File {
		f, err := program.ParseScenario("user.rx", []byte(src))
		Expect(err).NotTo(HaveOccurred())
		return f
	}
	const scorer = "//rx:scenario user\n//rx:batches 4\n//rx:input x normal(0, 1)\npackage p\n\n" +
		"func f(x [B][5]float32) (probs [B][5]float32, classes [B]int64) {\n\tprobs = Softmax(x, 1)\n\tclasses = Argmax(probs, 1)\n\treturn\n}\n"

	It("reports a mutant the files give nothing to break as not exercised, not missed, with AllowNotExercised", func() {
		outs, err := selftest.Run(ctx, []*program.File{parse(scorer)}, selftest.Options{AllowNotExercised: true})
		Expect(err).NotTo(HaveOccurred())
		for _, o := range outs {
			if o.Mutant.Name == "wrong-error-text" {
				Expect(o.Verdict).To(Equal(selftest.NotExercised))
			} else if o.Broken > 0 {
				Expect(o.Verdict).To(Equal(selftest.Caught), o.Mutant.Name)
			}
		}
		_, err = selftest.Run(ctx, []*program.File{parse(scorer)}, selftest.Options{})
		Expect(err).To(MatchError(selftest.ErrNotCaught))
		Expect(err.Error()).To(ContainSubstring("wrong-error-text (not exercised"))
	})

	It("refuses files that already fail without a mutant, instead of counting every mutant caught", func() {
		failing := "//rx:scenario failing\n//rx:batches 4\n//rx:input x normal(0, 1)\n//rx:tolerance y rtol=0 atol=0\npackage p\n\n" +
			"func f(x [B][8]float32) (y [B][8]float32) {\n\ty = Exp(Tanh(x) * 3.7)\n\treturn\n}\n"
		outs, err := selftest.Run(ctx, []*program.File{parse(failing)}, selftest.Options{AllowNotExercised: true})
		Expect(err).To(MatchError(selftest.ErrBaseline))
		Expect(outs).To(BeNil())
		Expect(err.Error()).To(ContainSubstring("FAIL failing/f/b4/fallback: y: "))
	})

	It("flips a class to another class of the output, never past the last", func() {
		f := parse(scorer)
		flip, err := selftest.Select(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(flip[0].Name).To(Equal("class-flip"))
		probs := tensor.FromFloat32(make([]float32, 10), 2, 5)
		out := executor.Outcome{Outputs: map[string]*tensor.Tensor{"probs": probs, "classes": tensor.FromInt64([]int64{1, 4}, 2)}}
		var runErr error
		Expect(flip[0].Break(f.Func("f"), nil, &out, &runErr, func(string) compare.Tolerance { return compare.DefaultTolerance() })).To(BeTrue())
		Expect(out.Outputs["classes"].I64).To(Equal([]int64{1, 0}))
	})

	It("leaves out the mutants Select is told to skip, and refuses an unknown name", func() {
		muts, err := selftest.Select([]string{"wrong-error-text", "class-flip"})
		Expect(err).NotTo(HaveOccurred())
		Expect(muts).To(HaveLen(len(selftest.Mutants()) - 2))
		for _, m := range muts {
			Expect(m.Name).NotTo(BeElementOf("wrong-error-text", "class-flip"))
		}
		_, err = selftest.Select([]string{"wrong-text"})
		Expect(err).To(MatchError(selftest.ErrUnknownMutant))
		Expect(err.Error()).To(ContainSubstring(`unknown mutant "wrong-text" (want one of class-flip, stray-nan,`))
	})
})

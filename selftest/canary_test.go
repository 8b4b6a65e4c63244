package selftest_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/selftest"
	"github.com/rextio/rxeq/tensor"
)

// hostile is the command that starts this test binary as the hostile
// executor (see TestMain).
func hostile() []string {
	self, err := os.Executable()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return []string{self, selftest.HostileArg}
}

// verdicts maps each canary's name to its verdict.
func verdicts(outs []selftest.CanaryOutcome) map[string]selftest.CanaryVerdict {
	m := map[string]selftest.CanaryVerdict{}
	for _, o := range outs {
		m[o.Canary.Name] = o.Verdict
	}
	return m
}

// ---- four weakenings of the judgement, planted here and nowhere else ----

// infMatchesOppositeInf is compare.Outputs where +Inf matches -Inf: an
// infinity against the other infinity is replaced by the oracle's before
// the real comparison.
func infMatchesOppositeInf(fn *program.Func, want, got map[string]*tensor.Tensor, tols map[string]compare.Tolerance, classes map[string]compare.ClassSource) ([]compare.OutputMetrics, []string) {
	weak := map[string]*tensor.Tensor{}
	for name, g := range got {
		w := want[name]
		if w == nil || g.DType != tensor.Float32 || w.Len() != g.Len() {
			weak[name] = g
			continue
		}
		g = g.Clone()
		for i, x := range w.Float64s() {
			if math.IsInf(x, 0) && math.IsInf(float64(g.F32[i]), 0) {
				g.F32[i] = float32(x)
			}
		}
		weak[name] = g
	}
	return compare.Outputs(fn, want, weak, tols, classes)
}

// nearTieWithoutInfGuard is compare.Outputs whose near-tie rule lacks
// its guard for an infinite best score: |top − s| ≤ allowance holds for
// every s when top is infinite, so any class of such a row passes (the
// executor's own-argmax rule, where it applies, is left as it is).
func nearTieWithoutInfGuard(fn *program.Func, want, got map[string]*tensor.Tensor, tols map[string]compare.Tolerance, classes map[string]compare.ClassSource) ([]compare.OutputMetrics, []string) {
	weak := map[string]*tensor.Tensor{}
	for name, g := range got {
		weak[name] = g
	}
	for name, src := range classes {
		w, g, s := want[name], got[name], want[src.Scores]
		if src.Final || w == nil || g == nil || s == nil || s.Rank() != 2 || src.Axis != 1 || g.Len() != s.Shape[0] {
			continue
		}
		g = g.Clone()
		sv := s.Float64s()
		for row := range g.I64 {
			top, nan := math.Inf(-1), false
			for _, v := range sv[row*s.Shape[1] : (row+1)*s.Shape[1]] {
				nan = nan || math.IsNaN(v)
				top = math.Max(top, v)
			}
			if !nan && math.IsInf(top, 0) {
				g.I64[row] = w.I64[row]
			}
		}
		weak[name] = g
	}
	return compare.Outputs(fn, want, weak, tols, classes)
}

// ulpAsValueBound is compare.Tolerances with ulp=N replaced by a bound in
// value: N+1 float32 spacings at the oracle's value (what the ULP bound
// allows in value), without the ULP test itself.
func ulpAsValueBound(f *program.File, fn *program.Func, def compare.Tolerance) map[string]compare.Tolerance {
	tols := compare.Tolerances(f, fn, def)
	for k, t := range tols {
		t.UseULP = false
		tols[k] = t
	}
	return tols
}

// ulpAsDefault is compare.Tolerances with ulp=N replaced by the default
// relative and absolute tolerance.
func ulpAsDefault(f *program.File, fn *program.Func, def compare.Tolerance) map[string]compare.Tolerance {
	tols := compare.Tolerances(f, fn, def)
	for k, t := range tols {
		if t.UseULP {
			tols[k] = def
		}
	}
	return tols
}

// within is the blame's element rule.
func within(want, got float64, tol compare.Tolerance) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return want == got
	}
	return math.Abs(got-want) <= tol.Allowed(want)
}

// blameWithoutRoundedCheck is harness.BlameOutputs without its check that
// the rounded reference misses the exact one too: float32-limit wherever
// the executor agrees with the rounded reference.
func blameWithoutRoundedCheck(fn *program.Func, metrics []compare.OutputMetrics, want, got, rounded map[string]*tensor.Tensor, tols map[string]compare.Tolerance) harness.Blame {
	if rounded == nil {
		return harness.BlameExecutor
	}
	for _, m := range metrics {
		if m.OK {
			continue
		}
		w, g, rd := want[m.Name], got[m.Name], rounded[m.Name]
		if m.Problem != "" || w == nil || g == nil || rd == nil || w.DType == tensor.Int64 {
			return harness.BlameExecutor
		}
		wf, gf, rf := w.Float64s(), g.Float64s(), rd.Float64s()
		for i := range wf {
			if !within(wf[i], gf[i], tols[m.Name]) && !within(rf[i], gf[i], tols[m.Name]) {
				return harness.BlameExecutor
			}
		}
	}
	return harness.BlameFloat32
}

// invarianceByValue is harness.CheckInvariance comparing values, not
// bits: every zero is made +0 on both sides first.
func invarianceByValue(ctx context.Context, fn *ir.Func, inputs, base map[string]*tensor.Tensor, run harness.InvarianceRun) ([]harness.InvarianceViolation, error) {
	plus := func(m map[string]*tensor.Tensor) map[string]*tensor.Tensor {
		out := map[string]*tensor.Tensor{}
		for k, t := range m {
			t = t.Clone()
			for i, v := range t.F32 {
				if v == 0 {
					t.F32[i] = 0
				}
			}
			out[k] = t
		}
		return out
	}
	return harness.CheckInvariance(ctx, fn, inputs, plus(base), func(ctx context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
		out, err := run(ctx, in)
		return plus(out), err
	})
}

var _ = Describe("the canaries", func() {
	ctx := context.Background()

	It("flag every rule of the judgement, with the report that flagged each", func() {
		outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{Hostile: hostile()})
		Expect(err).NotTo(HaveOccurred())
		Expect(outs).To(HaveLen(len(selftest.Canaries())))
		reports, runner := map[string]string{}, map[string]bool{}
		for _, o := range outs {
			Expect(o.Verdict).To(Equal(selftest.Flagged), o.Canary.Name)
			reports[o.Canary.Name] = o.Report
			runner[o.Canary.Name] = o.Runner
		}
		// The canaries on their files' own inputs are judged by rxeq
		// run's runner too; those with scores given by hand are not.
		for _, name := range []string{"minus-inf-for-plus", "minus-zero-for-plus", "two-ulp-for-ulp-1", "atol-only", "extra-output",
			"reworded", "success-for-failure", "one-step-above-rounded", "finite-for-overflow", "two-ulp-under-max-ulp-1"} {
			Expect(runner[name]).To(BeTrue(), name)
		}
		for _, name := range []string{"finite-for-inf-best", "exact-tie-broken-late", "failure-for-success", "one-ulp-alone", "decoy", "nocrc"} {
			Expect(runner[name]).To(BeFalse(), name)
		}
		Expect(reports["minus-inf-for-plus"]).To(Equal("pinf: 1 / 8 mismatched (12.5%); first mismatches: [0 0] want +Inf got -Inf"))
		Expect(reports["two-ulp-for-ulp-1"]).To(ContainSubstring("first mismatches: [0 0] want 1.5 got 1.5000002"))
		Expect(reports["finite-for-inf-best"]).To(ContainSubstring("[2] want 0 got 1 (oracle scores +Inf, 5)"))
		Expect(reports["one-step-above-rounded"]).To(HavePrefix("blame executor: y: 1 / 8 mismatched"))
		Expect(reports["decoy"]).To(HavePrefix(`source lock failed in function rx_fn_decoy: //rx:lock "for (int64_t i = 0; i < 3; i++) {" (selftest/canaries/lock.rx:`))
		Expect(reports["nocrc"]).To(ContainSubstring("hostile-nocrc: the result of score has no input_crc32 for input x"))
		Expect(reports["dims"]).To(ContainSubstring("output logits is float32 [2 4], want float32 [2 3]"))
	})

	It("have a canary for every rule of the registry, and every canary a rule of it", func() {
		noCanary, unknown := selftest.Uncovered(selftest.Rules(), selftest.Canaries())
		Expect(noCanary).To(BeEmpty(), "rules without a canary")
		Expect(unknown).To(BeEmpty(), "canaries of rules not in the registry")
		ids, names := map[string]bool{}, map[string]bool{}
		for _, r := range selftest.Rules() {
			Expect(ids[r.ID]).To(BeFalse(), "rule %s twice", r.ID)
			ids[r.ID] = true
			Expect(r.What).NotTo(BeEmpty())
		}
		for _, c := range selftest.Canaries() {
			Expect(names[c.Name]).To(BeFalse(), "canary %s twice", c.Name)
			names[c.Name] = true
		}
	})

	It("are documented: every rule in docs/comparison.md's table, the counts in docs/cli.md", func() {
		doc, err := os.ReadFile("../docs/comparison.md")
		Expect(err).NotTo(HaveOccurred())
		for _, r := range selftest.Rules() {
			Expect(string(doc)).To(ContainSubstring("| `%s` | %s |", r.ID, r.What), "docs/comparison.md lists rule %s as the registry says it", r.ID)
		}
		for _, c := range selftest.Canaries() {
			Expect(string(doc)).To(ContainSubstring("`%s`: ", c.Name), "docs/comparison.md lists canary %s", c.Name)
		}
		cli, err := os.ReadFile("../docs/cli.md")
		Expect(err).NotTo(HaveOccurred())
		n, m := len(selftest.Rules()), len(selftest.Canaries())
		Expect(string(cli)).To(ContainSubstring("rules covered: %d of %d (%d of %d canaries flagged; ", n, n, m, m))
		Expect(string(cli)).To(ContainSubstring("%d rules, %d canaries", n, m))
	})

	It("refuse a rule added without a canary, naming it, and run nothing", func() {
		rules := append(selftest.Rules(), selftest.Rule{ID: "new-rule", What: "a rule added later"})
		outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{Rules: rules, Hostile: hostile()})
		Expect(err).To(MatchError(selftest.ErrNoCanary))
		Expect(err.Error()).To(HaveSuffix("no canary for rule new-rule"))
		Expect(outs).To(BeNil())
	})

	DescribeTable("fail, naming the rule, when the judgement is weakened",
		func(j func(*selftest.Judgement), missed ...string) {
			weak := selftest.DefaultJudgement()
			j(&weak)
			outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{Judgement: &weak, Hostile: hostile()})
			Expect(err).To(MatchError(selftest.ErrCanaryMissed))
			Expect(err).NotTo(MatchError(selftest.ErrCanaryBroken))
			v := verdicts(outs)
			for _, o := range outs {
				if !contains(missed, o.Canary.Rule) {
					Expect(o.Verdict).To(Equal(selftest.Flagged), o.Canary.Name)
					continue
				}
				Expect(o.Verdict).To(Equal(selftest.Missed), o.Canary.Name)
				Expect(err.Error()).To(ContainSubstring("rule %s: canary %s was not flagged", o.Canary.Rule, o.Canary.Name))
			}
			Expect(v).To(HaveLen(len(selftest.Canaries())))
		},
		Entry("+Inf matching -Inf", func(j *selftest.Judgement) { j.Outputs = infMatchesOppositeInf }, "inf-plus-vs-minus", "inf-minus-vs-plus"),
		Entry("the near-tie rule without its guard for an infinite best score", func(j *selftest.Judgement) { j.Outputs = nearTieWithoutInfGuard }, "near-tie-inf"),
		Entry("ulp=N held as N+1 float32 spacings in value", func(j *selftest.Judgement) { j.Tolerances = ulpAsValueBound }, "tolerance-ulp", "tolerance-ulp-and-rel"),
		Entry("ulp=N replaced by the default tolerance", func(j *selftest.Judgement) { j.Tolerances = ulpAsDefault }, "tolerance-ulp", "tolerance-ulp-and-rel"),
		Entry("float32-limit blame without the rounded-reference check", func(j *selftest.Judgement) { j.Blame = blameWithoutRoundedCheck }, "blame-rounded-misses"),
		Entry("invariance by value: -0 equal to +0", func(j *selftest.Judgement) { j.Invariance = invarianceByValue }, "invariance-bits"),
	)

	It("call a canary broken, not flagged, when its unbroken control fails too", func() {
		strict := selftest.DefaultJudgement()
		strict.Tolerances = func(f *program.File, fn *program.Func, def compare.Tolerance) map[string]compare.Tolerance {
			return compare.Tolerances(f, fn, compare.Tolerance{})
		}
		strict.Errors = func(want, got error) (bool, string) { return false, "every error differs" }
		outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{Judgement: &strict, Hostile: hostile()})
		Expect(err).To(MatchError(selftest.ErrCanaryBroken))
		v := verdicts(outs)
		Expect(v["finite-for-overflow"]).To(Equal(selftest.Broken), "float32(Exp(89)/2) is not Exp(89)/2, so a zero tolerance fails the control")
		Expect(v["reworded"]).To(Equal(selftest.Broken))
		Expect(err.Error()).To(ContainSubstring("rule error-text: canary reworded: control: the oracle's own error does not match itself: every error differs"))
	})

	It("call the external canaries broken without a hostile executor", func() {
		outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{})
		Expect(err).To(MatchError(selftest.ErrCanaryBroken))
		for _, o := range outs {
			if strings.HasPrefix(o.Canary.Rule, "external-") {
				Expect(o.Verdict).To(Equal(selftest.Broken))
				Expect(o.Report).To(Equal("no command for the hostile executor (rxeq selftest-executor)"))
			} else {
				Expect(o.Verdict).To(Equal(selftest.Flagged), o.Canary.Name)
			}
		}
	})
})

var _ = Describe("the hostile executor", func() {
	It("refuses an unknown misbehaviour, naming the known ones", func() {
		err := selftest.ServeHostile(context.Background(), strings.NewReader(""), &bytes.Buffer{}, "nope")
		Expect(err).To(MatchError(selftest.ErrUnknownMisbehaviour))
		Expect(err.Error()).To(Equal(`unknown misbehaviour "nope" (want one of dims, dtype, mutate, nocrc, ok, protocol, wrongcrc)`))
	})

	It("greets with the protocol's hello and exits cleanly at EOF", func() {
		var out bytes.Buffer
		Expect(selftest.ServeHostile(context.Background(), strings.NewReader(""), &out, "ok")).To(Succeed())
		Expect(out.String()).To(ContainSubstring(`"protocol":"rxeq.executor/v1"`))
	})
})

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

package harness_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/internal/testprog"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/reports"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Run", func() {
	ctx := context.Background()

	It("runs scenario × function × batch × executor in matrix order", func() {
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(res.Cases)).To(Equal([]string{
			"tiny/lin/b1/oracle", "tiny/lin/b1/fallback",
			"tiny/lin/b4/oracle", "tiny/lin/b4/fallback",
			"tiny/lin/b9/oracle", "tiny/lin/b9/fallback",
			"tiny/sq/b1/oracle", "tiny/sq/b1/fallback",
			"tiny/sq/b4/oracle", "tiny/sq/b4/fallback",
			"tiny/sq/b9/oracle", "tiny/sq/b9/fallback",
		}))
		Expect(res.OK()).To(BeTrue())
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
			Expect(c.Path).To(Equal(c.Executor))
			Expect(c.Seed).To(Equal(uint64(7)))
		}
		fb := byExecutor(res.Cases, "fallback")[1] // lin at batch 4
		Expect(fb.Outputs).To(HaveLen(3))
		Expect([]string{fb.Outputs[0].Name, fb.Outputs[1].Name, fb.Outputs[2].Name}).To(Equal([]string{"logits", "probs", "classes"}))
		Expect(fb.Outputs[1].Total).To(Equal(12))
		Expect(fb.Tolerances["probs"]).To(Equal(compare.DefaultTolerance()))
	})

	It("gives the same results in the same order whatever the parallelism", func() {
		files := []*program.File{tinyFile(), tinyFile()}
		opts := onlyFallback()
		opts.Parallel = 1
		serial, err := harness.Run(ctx, files, opts)
		Expect(err).NotTo(HaveOccurred())
		opts.Parallel = 16
		// Make later groups finish first: delay the early batches.
		opts.Executors = []executor.Executor{hookExecutor{name: "fallback", inner: fallback.Executor{},
			before: func(_ context.Context, _ string, in map[string]*tensor.Tensor) error {
				if in["x"].Shape[0] == 1 {
					time.Sleep(20 * time.Millisecond)
				}
				return nil
			}}}
		parallel, err := harness.Run(ctx, files, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(parallel.Cases)).To(Equal(caseNames(serial.Cases)))
		for i := range serial.Cases {
			Expect(parallel.Cases[i].Status).To(Equal(serial.Cases[i].Status))
			Expect(parallel.Cases[i].Inputs).To(Equal(serial.Cases[i].Inputs))
			Expect(parallel.Cases[i].Outputs).To(Equal(serial.Cases[i].Outputs))
		}
	})

	It("generates each input from the scenario seed and the case name", func() {
		f := tinyFile()
		in, err := harness.GenerateInputs(f, f.Func("lin"), 4, 7, nil)
		Expect(err).NotTo(HaveOccurred())
		x := tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, tensor.DeriveSeed(7, "tiny/lin/b4/x"), 4, 4)
		w := tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.5}, tensor.DeriveSeed(7, "tiny/lin/b4/w"), 4, 3)
		Expect(in["x"]).To(Equal(x))
		Expect(in["w"]).To(Equal(w))

		res, err := harness.Run(ctx, []*program.File{f}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		c := res.Cases[2] // tiny/lin/b4/oracle
		Expect(c.Name()).To(Equal("tiny/lin/b4/oracle"))
		Expect(c.Inputs).To(ConsistOf(
			harness.InputDigest{Name: "w", Before: harness.Digest(w), After: harness.Digest(w)},
			harness.InputDigest{Name: "x", Before: harness.Digest(x), After: harness.Digest(x)},
		))
	})

	It("binds the batch symbol, int64 scalars from const, and reports what it cannot bind", func() {
		f := parseRx("sym.rx", `//rx:input x normal(0, 1)
//rx:input y normal(0, 1)
//rx:input k const(3)
package p

func g(x [B][2]float32, y [K][B]float32, k int64) (z [B][2]float32) {
	z = x
	return
}
`)
		_, err := harness.GenerateInputs(f, f.Funcs[0], 5, 1, nil)
		Expect(errors.Is(err, harness.ErrScenario)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("symbolic dimension K is not the batch symbol B"))
		in, err := harness.GenerateInputs(f, f.Funcs[0], 5, 1, map[string]int{"K": 3})
		Expect(err).NotTo(HaveOccurred())
		Expect(in["x"].Shape).To(Equal([]int{5, 2}))
		Expect(in["y"].Shape).To(Equal([]int{3, 5}))
		Expect(in["k"]).To(Equal(tensor.Scalar(3)))
		// Dims (or a batch) the checker did not size for cannot make an
		// overflowing shape either: refused before anything is allocated.
		_, err = harness.GenerateInputs(f, f.Funcs[0], 5, 1, map[string]int{"K": 1 << 60})
		Expect(errors.Is(err, harness.ErrScenario)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("g: parameter y: shape [1152921504606846976 5] at batch 5 has more than 1152921504606846975 elements")))

		noInput := parseRx("noinput.rx", "package p\n\nfunc g(x [B][2]float32) (z [B][2]float32) {\n\tz = x\n\treturn\n}\n")
		res, err := harness.Run(ctx, []*program.File{noInput}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(2)) // default batch 1, two executors
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusError))
			Expect(c.Message).To(ContainSubstring("parameter x has no //rx:input"))
		}
	})

	It("reports a wrong executor as failing, with the mismatch report, and keeps going", func() {
		wrong := hookExecutor{name: "wrong", inner: fallback.Executor{},
			after: func(fn string, in map[string]*tensor.Tensor, out *executor.Outcome, _ *error) {
				if fn == "lin" && in["x"].Shape[0] == 4 {
					p := out.Outputs["probs"]
					p.F32[2*3+1] += 0.01 // probs[2][1]
				}
			}}
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}, wrong}}
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeFalse())
		pass, fail, errored := res.Counts()
		Expect([]int{pass, fail, errored}).To(Equal([]int{17, 1, 0}))
		var bad harness.Case
		for _, c := range res.Cases {
			if c.Status != harness.StatusPass {
				bad = c
			}
		}
		Expect(bad.Name()).To(Equal("tiny/lin/b4/wrong"))
		Expect(bad.Status).To(Equal(harness.StatusFail))
		Expect(bad.Message).To(HavePrefix("probs: 1 / 12 mismatched (8.3%); greatest abs diff "))
		Expect(bad.Message).To(ContainSubstring("at [2 1]"))
		Expect(bad.Outputs[1].Mismatches).To(Equal(1))
		Expect(bad.Outputs[1].MaxAbsIndex).To(Equal([]int{2, 1}))
		Expect(bad.Outputs[1].MaxAbsDiff).To(BeNumerically("~", 0.01, 1e-5))
		Expect(bad.Outputs[0].OK).To(BeTrue())
		// The wrong executor's probabilities are also measured against the
		// fallback in ULPs: that element is far away.
		Expect(bad.ULP).To(HaveLen(3))
		Expect(bad.ULP[1].MaxULP).To(BeNumerically(">", 10000))
		Expect(bad.ULP[1].MaxULPIndex).To(Equal([]int{2, 1}))
		Expect(bad.ULP[1].Against).To(Equal("fallback"))
		for _, o := range reports.FromResult(res, reports.RunInfo{}).Cases[0].Outputs {
			Expect(o.Against).To(BeElementOf("oracle", "fallback"))
		}

		// With another ULP base, the reports name it.
		opts.ULPBase = "wrong"
		res, err = harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		var measured []string
		for _, o := range reports.FromResult(res, reports.RunInfo{}).Cases {
			for _, out := range o.Outputs {
				if out.Against != "oracle" {
					measured = append(measured, o.Executor+" against "+out.Against)
				}
			}
		}
		Expect(measured).NotTo(BeEmpty())
		Expect(measured).To(HaveEach("fallback against wrong"))
	})

	It("fails a case whose executor modifies its inputs, and only that case", func() {
		mutating := hookExecutor{name: "mutating", inner: fallback.Executor{},
			after: func(fn string, in map[string]*tensor.Tensor, _ *executor.Outcome, _ *error) {
				if fn == "sq" {
					in["x"].F32[0] = -in["x"].F32[0] - 1
				}
			}}
		opts := harness.Options{Executors: []executor.Executor{mutating, fallback.Executor{}}}
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range res.Cases {
			if c.Executor == "mutating" && c.Function == "sq" {
				Expect(c.Status).To(Equal(harness.StatusFail))
				Expect(c.Message).To(ContainSubstring("input x was modified by the executor"))
				Expect(c.Outputs).NotTo(BeEmpty())
				Expect(c.Inputs[0].Before).NotTo(Equal(c.Inputs[0].After))
			} else {
				// The fallback runs after the mutating executor on its own
				// copy of the same bytes.
				Expect(c.Status).To(Equal(harness.StatusPass), c.Name()+": "+c.Message)
			}
		}
	})

	It("times a case out and moves on", func() {
		release := make(chan struct{})
		defer close(release)
		stuck := hookExecutor{name: "stuck", inner: fallback.Executor{},
			before: func(_ context.Context, fn string, in map[string]*tensor.Tensor) error {
				if fn == "lin" && in["x"].Shape[0] == 9 {
					<-release // ignores its context
				}
				return nil
			}}
		var closed atomic.Int32
		stuck.closed = &closed
		opts := harness.Options{Executors: []executor.Executor{stuck}, CaseTimeout: 50 * time.Millisecond}
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range res.Cases {
			if c.Name() == "tiny/lin/b9/stuck" {
				Expect(c.Status).To(Equal(harness.StatusError))
				Expect(c.Message).To(ContainSubstring("case timed out after 50ms"))
				Expect(c.Inputs[0].After).To(BeEmpty())
			} else {
				Expect(c.Status).To(Equal(harness.StatusPass), c.Name())
			}
		}
	})

	It("stops on cancellation and reports the cases it did not run", func() {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var started atomic.Int32
		blocking := hookExecutor{name: "blocking", inner: fallback.Executor{},
			before: func(c context.Context, _ string, _ map[string]*tensor.Tensor) error {
				if started.Add(1) == 1 {
					cancel()
				}
				<-c.Done()
				return c.Err()
			}}
		opts := harness.Options{Executors: []executor.Executor{blocking}, Parallel: 1}
		res, err := harness.Run(cctx, []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, context.Canceled)).To(BeTrue())
		Expect(res.Cases).To(HaveLen(12))
		notRun := 0
		for _, c := range res.Cases {
			if c.Executor == "blocking" {
				Expect(c.Status).To(Equal(harness.StatusError))
				Expect(c.Message).To(ContainSubstring("context canceled"))
			}
			if strings.HasPrefix(c.Message, "not run: ") {
				notRun++
			}
		}
		// At most the group that cancelled and one that had already been
		// admitted ran; the rest were never started.
		Expect(notRun).To(BeNumerically(">=", 8))
		Expect(int(started.Load())).To(BeNumerically("<=", 2))
	})

	It("splits the cases into shards that cover every case exactly once", func() {
		files := []*program.File{tinyFile(), parseRx("tiny2.rx", strings.Replace(testprog.TinySrc, "scenario tiny", "scenario tiny2", 1))}
		full, err := harness.Run(ctx, files, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		for _, n := range []int{1, 2, 3, 5, 50} {
			var all []string
			for i := 1; i <= n; i++ {
				opts := onlyFallback()
				opts.Shard = harness.Shard{Index: i, Total: n}
				part, err := harness.Run(ctx, files, opts)
				Expect(err).NotTo(HaveOccurred())
				names := caseNames(part.Cases)
				// A group's executors stay together in one shard.
				for j := 0; j < len(names); j += 2 {
					Expect(strings.TrimSuffix(names[j], "/oracle")).To(Equal(strings.TrimSuffix(names[j+1], "/fallback")))
				}
				all = append(all, names...)
			}
			want := caseNames(full.Cases)
			sort.Strings(all)
			sort.Strings(want)
			Expect(all).To(Equal(want), fmt.Sprintf("%d shards", n))
		}
	})

	It("parses and validates shards", func() {
		s, err := harness.ParseShard("2/4")
		Expect(err).NotTo(HaveOccurred())
		Expect(s).To(Equal(harness.Shard{Index: 2, Total: 4}))
		Expect(s.String()).To(Equal("2/4"))
		for _, bad := range []string{"0/4", "5/4", "1/0", "x/2", "3"} {
			_, err := harness.ParseShard(bad)
			Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), bad)
		}
		_, err = harness.Run(ctx, nil, harness.Options{Shard: harness.Shard{Index: 3, Total: 2}})
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue())
	})

	It("filters backends and rejects unknown ones", func() {
		opts := onlyFallback()
		opts.Backends = []executor.Name{"fallback"}
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(6))
		for _, c := range res.Cases {
			Expect(c.Executor).To(Equal(executor.Name("fallback")))
			Expect(c.Status).To(Equal(harness.StatusPass))
		}
		opts.Backends = []executor.Name{"gpu"}
		_, err = harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring(`unknown backend "gpu"`))
	})

	It("overrides batches and the seed", func() {
		opts := onlyFallback()
		seed := uint64(99)
		opts.Batches, opts.Seed = []int{2}, &seed
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(res.Cases)).To(Equal([]string{"tiny/lin/b2/oracle", "tiny/lin/b2/fallback", "tiny/sq/b2/oracle", "tiny/sq/b2/fallback"}))
		x := tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, tensor.DeriveSeed(99, "tiny/sq/b2/x"), 2, 4)
		Expect(res.Cases[2].Inputs[0]).To(Equal(harness.InputDigest{Name: "x", Before: harness.Digest(x), After: harness.Digest(x)}))
	})

	It("reports an executor that cannot prepare as errors, not as a stop", func() {
		opts := harness.Options{Executors: []executor.Executor{failingPrepare{}, fallback.Executor{}}}
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range res.Cases {
			if c.Executor == "broken" {
				Expect(c.Status).To(Equal(harness.StatusError))
				Expect(c.Message).To(ContainSubstring("no toolchain here"))
			} else {
				Expect(c.Status).To(Equal(harness.StatusPass))
			}
		}
		Expect(res.Preparations).To(HaveLen(3))
		Expect(res.Preparations[1].Error).To(Equal("no toolchain here"))
	})

	It("charges each preparation and input generation once", func() {
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		var prepared, generated int
		for _, c := range res.Cases {
			Expect(c.Timing.Execute).To(BeNumerically(">", 0))
			if c.Timing.Prepare > 0 {
				prepared++
			}
			if c.Timing.Inputs > 0 {
				generated++
			}
		}
		Expect(prepared).To(BeNumerically("<=", 2))
		Expect(generated).To(Equal(6))
	})
})

var _ = Describe("Run on runtime errors", func() {
	ctx := context.Background()
	const errSrc = `//rx:scenario errs
//rx:batches 2
//rx:input x normal(0, 1)
//rx:input d const(0)
%s
package p

func f(x [B][2]float32, d int64) (y [B][2]float32) {
	y = x
	for i := range 3 {
		if CheckedRem(i, d) == 1 {
			y = y * 2
		}
	}
	return
}
`
	It("passes executors that fail exactly like the oracle's expected error", func() {
		f := parseRx("errs.rx", fmt.Sprintf(errSrc, `//rx:expect-error "CheckedRem: division by zero (i=0)"`))
		res, err := harness.Run(ctx, []*program.File{f}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(2))
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
			Expect(c.Error).To(Equal("f: CheckedRem: division by zero (i=0) at errs.rx:11:6"))
		}
	})

	It("fails an executor whose error differs from the oracle's", func() {
		f := parseRx("errs.rx", fmt.Sprintf(errSrc, `//rx:expect-error "division by zero"`))
		other := hookExecutor{name: "other", inner: fallback.Executor{},
			after: func(_ string, _ map[string]*tensor.Tensor, _ *executor.Outcome, err *error) {
				*err = &ir.RuntimeError{Kind: ir.ErrOverflow, Func: "f", Detail: "CheckedRem: integer overflow (i=0, divisor -1) at errs.rx:11:6"}
			}}
		succeeding := hookExecutor{name: "succeeding", inner: fallback.Executor{},
			after: func(_ string, in map[string]*tensor.Tensor, out *executor.Outcome, err *error) {
				*err = nil
				out.Outputs = map[string]*tensor.Tensor{"y": in["x"].Clone()}
			}}
		opts := harness.Options{Executors: []executor.Executor{other, succeeding}}
		res, err := harness.Run(ctx, []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases[0].Status).To(Equal(harness.StatusPass))
		Expect(res.Cases[1].Status).To(Equal(harness.StatusFail))
		Expect(res.Cases[1].Message).To(ContainSubstring("integer overflow"))
		Expect(res.Cases[2].Status).To(Equal(harness.StatusFail))
		Expect(res.Cases[2].Message).To(ContainSubstring("but the executor succeeded"))
	})

	It("fails every case when the expected error does not happen", func() {
		src := strings.Replace(fmt.Sprintf(errSrc, `//rx:expect-error "division by zero"`), "const(0)", "const(2)", 1)
		res, err := harness.Run(ctx, []*program.File{parseRx("errs.rx", src)}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusFail))
			Expect(c.Message).To(ContainSubstring(`expects an error containing "division by zero", but the reference (oracle) succeeded`))
		}
	})

	It("marks every case an error when the oracle fails unexpectedly", func() {
		res, err := harness.Run(ctx, []*program.File{parseRx("errs.rx", fmt.Sprintf(errSrc, ""))}, onlyFallback())
		Expect(err).NotTo(HaveOccurred())
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusError))
			Expect(c.Message).To(ContainSubstring("has no //rx:expect-error"))
		}
	})
})

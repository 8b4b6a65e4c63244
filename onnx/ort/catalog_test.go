package ort_test

import (
	"context"
	"fmt"
	"math"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

var _ = Describe("the catalog", func() {
	It("agrees with the oracle through both executors, except where a ledger entry says why not", func() {
		needLibrary()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		before := ort.Sessions()
		execs := []executor.Executor{both()[0], both()[1]}
		res, err := harness.Run(context.Background(), files, harness.Options{Executors: execs, SkipLocks: true})
		Expect(err).NotTo(HaveOccurred())
		skipped, failed := map[string]bool{}, map[string]bool{}
		led := ledger.Default()
		// The value class each function's failure shows (the most telling
		// of its mismatches, as rxeq run classifies it).
		values := map[string]string{"op-accuracy/transcendental": "finite", "op-accuracy/tails": "finite", "op-accuracy/sigmoid_underflow": "finite", "op-edges/reduce_specials": "nan", "edge-values/edge_specials": "finite", "op-accuracy/tanh_tiny": "finite"}
		ran := 0
		for _, c := range res.Cases {
			if c.Executor == executor.Oracle {
				continue
			}
			ran++
			switch c.Status {
			case harness.StatusSkip:
				Expect(c.Message).To(HavePrefix("skipped by //rx:skip at scenarios/"))
				Expect(c.Message).To(ContainSubstring("docs/onnx.md"))
				skipped[c.Scenario+"/"+c.Function] = true
			case harness.StatusFail:
				name := c.Scenario + "/" + c.Function
				failed[name] = true
				var ops []string
				for _, f := range files {
					if f.ScenarioName() != c.Scenario {
						continue
					}
					for _, src := range scenarios.Sources() {
						if src.Name == f.Name {
							ops = fuzz.ProgramOps(src.Text)
						}
					}
				}
				Expect(ops).NotTo(BeEmpty(), name)
				e := led.Match(ledger.Case{Executor: string(c.Executor), Version: "1.30.0", Ops: ops, Values: values[name], Scenario: c.Scenario})
				Expect(e).NotTo(BeNil(), c.Name()+": no ledger entry: "+c.Message)
			default:
				Expect(c.Status).To(Equal(harness.StatusPass), c.Name()+": "+c.Message)
				Expect(c.Path).To(Equal(c.Executor))
			}
		}
		Expect(ran).To(BeNumerically(">", 100))
		Expect(skipped).To(BeEmpty(), "the catalog records ONNX Runtime's differences in the ledger, not with //rx:skip")
		Expect(failed).To(Equal(map[string]bool{"op-accuracy/transcendental": true, "op-accuracy/tails": true, "op-accuracy/sigmoid_underflow": true, "op-edges/reduce_specials": true,
			"edge-values/edge_specials": true, "op-accuracy/tanh_tiny": true}))
		for _, p := range res.Preparations {
			if p.Executor != executor.Oracle {
				Expect(p.Error).To(BeEmpty())
				Expect(p.Framework).To(HavePrefix("ONNX Runtime 1.30.0, graph optimization "))
			}
		}
		Expect(ort.Sessions()).To(Equal(before), "the runner closed every prepared program, and every session with it")
	})

	It("gives the same bits with and without the graph optimizations, except MatMul+Add at batch 1 and a Transpose fed to MatMul", func() {
		needLibrary()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		ctx := context.Background()
		var diffs, other []string
		worst, cases, gram := 0, 0, 0
		for _, f := range files {
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			var prs [2]executor.Prepared
			for i, e := range both() {
				prs[i], err = e.Prepare(ctx, f, p)
				Expect(err).NotTo(HaveOccurred())
			}
			for _, fn := range f.Funcs {
				for _, batch := range f.Batches {
					in, err := harness.GenerateInputs(f, fn, batch, f.Seed, nil)
					Expect(err).NotTo(HaveOccurred())
					a, errA := prs[0].Run(ctx, fn.Name, in)
					b, errB := prs[1].Run(ctx, fn.Name, in)
					cases++
					if errA != nil || errB != nil {
						Expect(fmt.Sprint(errA)).To(Equal(fmt.Sprint(errB)), fn.Name)
						continue
					}
					for _, r := range fn.Results {
						ta, tb := a.Outputs[r.Name], b.Outputs[r.Name]
						for i := range ta.F32 {
							if math.Float32bits(ta.F32[i]) != math.Float32bits(tb.F32[i]) && !(ta.F32[i] != ta.F32[i] && tb.F32[i] != tb.F32[i]) {
								diffs = append(diffs, fmt.Sprintf("%s/%s/b%d %s[%d]: %v vs %v", f.ScenarioName(), fn.Name, batch, r.Name, i, ta.F32[i], tb.F32[i]))
								if f.ScenarioName() == "row-tiles" && fn.Name == "batch_gram" {
									// MatMul(Transpose(x), x): the optimizer
									// folds the Transpose into the MatMul
									// (FusedMatMul with transA), which sums the
									// batch in another order; within the
									// function's own tolerance of each other.
									x, y := float64(ta.F32[i]), float64(tb.F32[i])
									Expect(math.Abs(x-y)).To(BeNumerically("<=", 1e-3+1e-3*math.Abs(x)), diffs[len(diffs)-1])
									gram++
									continue
								}
								worst = max(worst, ulps(ta.F32[i], tb.F32[i]))
								if batch != 1 {
									other = append(other, diffs[len(diffs)-1])
								}
							}
						}
						Expect(ta.I64).To(Equal(tb.I64), fn.Name+" "+r.Name)
					}
				}
			}
			for _, pr := range prs {
				Expect(pr.Close()).To(Succeed())
			}
		}
		Expect(cases).To(BeNumerically(">", 50))
		if len(diffs) > 0 {
			AddReportEntry("optimized vs not, bit differences", strings.Join(diffs, "\n"))
		}
		// The known differences: at batch 1 the optimizer's MatMul+Add
		// fusion (a Gemm) sums in another order than MatMul then Add, a
		// few ULP apart (see the spec of known_test.go and docs/onnx.md);
		// and MatMul(Transpose(x), x) of row-tiles/batch_gram, above.
		AddReportEntry("row-tiles/batch_gram elements that differ", gram)
		Expect(other).To(BeEmpty(), "differences beyond batch 1 and the Gram matrix")
		Expect(worst).To(BeNumerically("<=", 64), "last-bit differences only")
	})
})

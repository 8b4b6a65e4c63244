package harness_test

import (
	"context"
	"errors"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// needTorch skips a spec, saying why, on a machine without libtorch; with
// RXEQ_REQUIRE_TORCH set (ci/test.sh) a missing libtorch fails it.
func needTorch() {
	GinkgoHelper()
	if err := builtin.Available(executor.Torch); err != nil {
		if os.Getenv("RXEQ_REQUIRE_TORCH") != "" {
			Fail("libtorch is required here (RXEQ_REQUIRE_TORCH is set) but: " + err.Error())
		}
		Skip("the torch executor needs libtorch, which this machine lacks: " + err.Error())
	}
}

var _ = Describe("The torch executor", Label("native", "torch"), func() {
	ctx := context.Background()

	It("runs the catalog with the other three, every case passing (torch skips op-accuracy/sigmoid_underflow, a ledger entry) and every lock holding", func() {
		needTorch()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		res, err := harness.Run(ctx, files, harness.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Unavailable).To(BeEmpty())
		// Every group × oracle, fallback, native, torch.
		per := map[executor.Name]int{}
		for _, c := range res.Cases {
			per[c.Executor]++
		}
		Expect(per).To(HaveLen(4))
		Expect(per["torch"]).To(BeNumerically(">", 0))
		for name, n := range per {
			Expect(n).To(Equal(per["torch"]), name)
		}
		for _, c := range res.Cases {
			if c.Executor == executor.Torch && c.Function == "sigmoid_underflow" {
				Expect(c.Status).To(Equal(harness.StatusSkip), c.Name()+": "+c.Message)
				Expect(c.Message).To(ContainSubstring("ledger torch-sigmoid-underflow"))
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusPass), c.Name()+": "+c.Message)
			Expect(c.Path).To(Equal(c.Executor))
			if c.Scenario == "remainder-by-zero" {
				Expect(c.Error).To(Equal("score_divisor: CheckedRem: division by zero (round_idx=0) at scenarios/error.rx:21:6"), c.Executor)
			}
		}
		for _, l := range res.Locks {
			Expect(l.OK()).To(BeTrue(), l.Function)
		}
		preps := 0
		for _, p := range res.Preparations {
			if p.Executor == executor.Torch {
				preps++
				Expect(p.Error).To(BeEmpty())
				Expect(p.Framework).To(HavePrefix("libtorch "))
			}
		}
		Expect(preps).To(Equal(len(files)))
	})

	It("prepares byte-identical C to the native executor's, so every lock holds for both", func() {
		needTorch()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range files {
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			tp, err := native.Executor{Options: native.Options{Runtime: executor.Torch}}.Prepare(ctx, f, p)
			Expect(err).NotTo(HaveOccurred())
			src, err := native.Generate(p)
			Expect(err).NotTo(HaveOccurred())
			Expect(tp.(executor.Built).Source()).To(Equal(src), f.ScenarioName())
			for _, fn := range f.Funcs {
				if len(fn.Locks) > 0 {
					Expect(lock.Check(tp.(executor.Built).Source(), native.CFuncName(fn.Name), fn.Locks).OK).To(BeTrue(), fn.Name)
				}
			}
			Expect(tp.Close()).To(Succeed())
		}
	})

	It("fails bad inputs and checked arithmetic with the same text as the oracle, the fallback and native", func() {
		needTorch()
		f := parseRx("errs.rx", `package p

func f(x [B][2]float32, y [B]float32, d int64) (z [B][2]float32) {
	z = x
	for i := range 3 {
		if CheckedRem(i, d) == 1 {
			z = z * 2
		}
	}
	return
}
`)
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		execs := []executor.Executor{oracle.Executor{}, fallback.Executor{}, native.Executor{}, native.Executor{Options: native.Options{Runtime: executor.Torch}}}
		var preps []executor.Prepared
		for _, e := range execs {
			pr, err := e.Prepare(ctx, f, p)
			Expect(err).NotTo(HaveOccurred(), e.Name())
			DeferCleanup(pr.Close)
			preps = append(preps, pr)
		}
		x := tensor.NewFloat32(3, 2)
		for name, in := range map[string]map[string]*tensor.Tensor{
			"division by zero":   {"x": x, "y": tensor.NewFloat32(3), "d": tensor.Scalar(0)},
			"a fixed dim":        {"x": tensor.NewFloat32(3, 4), "y": tensor.NewFloat32(3), "d": tensor.Scalar(1)},
			"a symbolic dim":     {"x": x, "y": tensor.NewFloat32(4), "d": tensor.Scalar(1)},
			"a dtype":            {"x": tensor.NewFloat64(3, 2), "y": tensor.NewFloat32(3), "d": tensor.Scalar(1)},
			"a rank":             {"x": x, "y": tensor.NewFloat32(3, 1), "d": tensor.Scalar(1)},
			"a missing input":    {"x": x, "y": tensor.NewFloat32(3)},
			"an unknown input":   {"x": x, "y": tensor.NewFloat32(3), "d": tensor.Scalar(1), "e": tensor.Scalar(1)},
			"a malformed tensor": {"x": {DType: tensor.Float32, Shape: []int{3, 2}, F32: make([]float32, 5)}, "y": tensor.NewFloat32(3), "d": tensor.Scalar(1)},
		} {
			var texts []string
			for i, pr := range preps {
				_, err := pr.Run(ctx, "f", in)
				Expect(err).To(HaveOccurred(), "%s: %s", name, execs[i].Name())
				texts = append(texts, err.Error())
			}
			for i := range texts {
				Expect(texts[i]).To(Equal(texts[0]), "%s: %s vs %s", name, execs[i].Name(), execs[0].Name())
			}
		}
	})
})

var _ = Describe("An unavailable executor", func() {
	It("is reported, and naming it in Backends is a usage error that gives the reason", func() {
		reason := "libtorch not found (install the Debian package libtorch-dev: …)"
		un := []executor.Unavailable{{Executor: executor.Torch, Reason: reason}}
		f := parseRx("t.rx", "package p\n\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x * 2\n\treturn\n}\n")
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}}, Unavailable: un}
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Unavailable).To(Equal(un))
		opts.Backends = []executor.Name{"fallback", "torch"}
		_, err = harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("backend torch is unavailable: " + reason))
	})

})

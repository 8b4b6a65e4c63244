package fuzz_test

import (
	"context"
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// ulpVariant is the fallback interpreter named name that must give the
// bits of twin (executor.Twin); with nudge it moves the last element of
// every float output of a function with a Tanh one ULP up, inside any
// tolerance.
type ulpVariant struct {
	name, twin executor.Name
	nudge      bool
	runs       *int
}

func (v ulpVariant) Name() executor.Name   { return v.name }
func (v ulpVariant) TwinOf() executor.Name { return v.twin }

func (v ulpVariant) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	return ulpVariantPrepared{v, f, inner}, err
}

type ulpVariantPrepared struct {
	v     ulpVariant
	f     *program.File
	inner executor.Prepared
}

func (p ulpVariantPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	if p.v.runs != nil {
		*p.v.runs++
	}
	out, err := p.inner.Run(ctx, fn, in)
	if err != nil || !p.v.nudge || !hasTanhOfRank2(p.f.Func(fn)) {
		return out, err
	}
	for _, t := range out.Outputs {
		if n := len(t.F32); n > 0 {
			t.F32[n-1] = math.Nextafter32(t.F32[n-1], float32(math.Inf(1)))
		}
	}
	return out, nil
}

func (p ulpVariantPrepared) Close() error { return p.inner.Close() }

var _ = Describe("variants that must equal their twin bit for bit (executor.Twin)", func() {
	ctx := context.Background()
	const src = `//rx:batches 1 3
//rx:input x normal(0, 1)
package p

func f(x [B][4]float32) (y [B][4]float32) {
	y = Tanh(x) * 2.0
	return
}
`

	It("finds a variant one ULP off its twin, which the oracle's tolerance would pass, naming the twin as the reference", func() {
		base := skewed{name: "base"}
		c := &fuzz.Checker{Executors: []executor.Executor{ulpVariant{name: "variant", twin: "base", nudge: true}, base}}
		rep, err := c.Check(ctx, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(HaveLen(2)) // batches 1 and 3
		for _, f := range rep.Findings {
			Expect(f.Kind).To(Equal(fuzz.KindMismatch))
			Expect(f.Executor).To(Equal(executor.Name("variant")))
			Expect(f.Reference).To(Equal(executor.Name("base")))
			Expect(f.Output).To(Equal("y"))
			Expect(f.Detail).To(ContainSubstring("variant differs bit for bit from base, which it must equal: y: at "))
		}

		alone := &fuzz.Checker{Executors: []executor.Executor{ulpVariant{name: "variant", twin: "base", nudge: true}}}
		rep, err = alone.Check(ctx, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue(), "without its twin a variant is held to the oracle's tolerance, which one ULP meets")
	})

	It("passes a variant with its twin's bits", func() {
		c := &fuzz.Checker{Executors: []executor.Executor{skewed{name: "base"}, ulpVariant{name: "variant", twin: "base"}}}
		rep, err := c.Check(ctx, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
	})

	It("reduces a variant's finding through the variant and its twin", func() {
		big := []byte(`//rx:batches 3
//rx:input x normal(0, 1)
package p

func f(x [B][4]float32) (y [B][4]float32, z [B][4]float32) {
	a := x * 3.0
	b := Relu(a)
	z = b + x
	y = Tanh(x) * 2.0
	return
}

func g(x [B][4]float32) (y [B][4]float32) {
	y = Exp(x)
	return
}
`)
		c := &fuzz.Checker{Executors: []executor.Executor{fallback.Executor{}, skewed{name: "base"}, ulpVariant{name: "variant", twin: "base", nudge: true}}}
		rep, err := c.Check(ctx, big)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).NotTo(BeEmpty())
		small, _, err := fuzz.ReduceFinding(ctx, big, rep.Findings[0], c)
		Expect(err).NotTo(HaveOccurred())
		Expect(fuzz.CountStmts(small)).To(BeNumerically("<", fuzz.CountStmts(big)))
		again, err := c.Check(ctx, small)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Has(rep.Findings[0].Signature())).To(BeTrue())
	})

	It("runs one variant per program in turn with RotateTwins, and every variant without it", func() {
		var a, b int
		execs := []executor.Executor{skewed{name: "base"}, ulpVariant{name: "va", twin: "base", runs: &a}, ulpVariant{name: "vb", twin: "base", runs: &b}}
		for _, rotate := range []bool{true, false} {
			a, b = 0, 0
			c := &fuzz.Checker{Executors: execs, RotateTwins: rotate, NoiseRuns: -1}
			for seed := range 4 {
				rep, err := c.Check(ctx, []byte(fmt.Sprintf("//rx:seed %d\n%s", seed, src)))
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.OK()).To(BeTrue())
			}
			if rotate {
				Expect([]int{a, b}).To(Equal([]int{4, 4}), "two programs each, at two batches")
			} else {
				Expect([]int{a, b}).To(Equal([]int{8, 8}))
			}
		}
	})
})

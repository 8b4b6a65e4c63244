package fuzz_test

import (
	"context"
	"math"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// shapeSensitive is the fallback, except that a program holding a loop
// over emi_j (a split loop) gets its float outputs one ULP up: a bug that
// depends on the shape of the code, far inside any tolerance, which only
// a metamorphic check can see.
type shapeSensitive struct{}

func (shapeSensitive) Name() executor.Name { return "shape-sensitive" }

func (shapeSensitive) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	split := false
	for _, fn := range f.Funcs {
		program.WalkStmts(fn.Body, func(s program.Stmt) {
			if loop, ok := s.(*program.For); ok && loop.Index != nil && loop.Index.Name == "emi_j" {
				split = true
			}
		})
	}
	return shapePrepared{inner: inner, split: split}, nil
}

type shapePrepared struct {
	inner executor.Prepared
	split bool
}

func (p shapePrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	if err != nil || !p.split {
		return out, err
	}
	m := map[string]*tensor.Tensor{}
	for k, t := range out.Outputs {
		t = t.Clone()
		for i, v := range t.F32 {
			t.F32[i] = math.Nextafter32(v, float32(math.Inf(1)))
		}
		m[k] = t
	}
	out.Outputs = m
	return out, nil
}

func (p shapePrepared) Close() error { return p.inner.Close() }

var _ = Describe("metamorphic variants", func() {
	ctx := context.Background()

	It("rewrites generated programs into programs that check, op for op the same", func() {
		kinds := map[string]int{}
		for seed := uint64(0); seed < 300; seed++ {
			src := fuzz.Generate(seed, fuzz.Config{}).Source
			vs, err := fuzz.Variants(src, seed, 2)
			Expect(err).NotTo(HaveOccurred())
			for _, v := range vs {
				_, err := program.Parse("v.rx", v.Source)
				Expect(err).NotTo(HaveOccurred(), "%s\n%s", v.What, v.Source)
				for _, k := range []string{"split", "wrapped", "never runs"} {
					if strings.Contains(v.What, k) {
						kinds[k]++
					}
				}
			}
		}
		Expect(kinds).To(HaveKeyWithValue("split", BeNumerically(">", 20)))
		Expect(kinds).To(HaveKeyWithValue("wrapped", BeNumerically(">", 20)))
		Expect(kinds).To(HaveKeyWithValue("never runs", BeNumerically(">", 20)))
	})

	It("finds no difference in the oracle and the fallback on generated programs", func() {
		c := fuzz.Checker{Metamorphic: 2}
		for seed := uint64(0); seed < 150; seed++ {
			rep, err := c.Check(ctx, fuzz.Generate(seed, fuzz.Config{}).Source)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Findings).To(BeEmpty(), "seed %d", seed)
		}
	})

	It("catches an executor whose results depend on the shape of the code by one ULP", func() {
		const src = `//rx:input x normal(0, 1)
package m

func f(x [B][3]float32) (y [B][3]float32) {
	y = x
	for i := range 6 {
		if CheckedRem(i, 2) == 0 {
			y = Tanh(y) * 1.5
		}
	}
	return
}
`
		plain := fuzz.Checker{Executors: []executor.Executor{shapeSensitive{}}}
		rep, err := plain.Check(ctx, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(BeEmpty(), "one ULP is inside the tolerance")

		found := false
		for seed := uint64(0); seed < 20 && !found; seed++ {
			emi := fuzz.Checker{Executors: []executor.Executor{shapeSensitive{}}, Metamorphic: 3}
			rep, err := emi.Check(ctx, []byte(strings.Replace(src, "package m", "//rx:seed "+strconv.FormatUint(seed, 10)+"\npackage m", 1)))
			Expect(err).NotTo(HaveOccurred())
			for _, f := range rep.Findings {
				Expect(f.Kind).To(Equal(fuzz.KindMetamorphic))
				Expect(f.Executor).To(Equal(executor.Name("shape-sensitive")))
				Expect(f.Detail).To(ContainSubstring("split at"))
				Expect(f.Detail).To(ContainSubstring("differs bit for bit: y: at [0 0]"))
				found = true
			}
		}
		Expect(found).To(BeTrue())
	})
})

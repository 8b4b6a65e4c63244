package fuzz_test

import (
	"context"
	"math"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// counted wraps an executor and counts its runs by the batch of their
// inputs.
type counted struct {
	inner executor.Executor
	mu    *sync.Mutex
	runs  map[int]int // batch → runs
}

func newCounted(inner executor.Executor) counted {
	return counted{inner: inner, mu: &sync.Mutex{}, runs: map[int]int{}}
}

func (c counted) Name() executor.Name { return c.inner.Name() }

func (c counted) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := c.inner.Prepare(ctx, f, p)
	return countedPrepared{c, inner}, err
}

func (c counted) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.runs {
		n += k
	}
	return n
}

type countedPrepared struct {
	c     counted
	inner executor.Prepared
}

func (p countedPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	batch := 0
	for _, t := range in {
		if len(t.Shape) > 0 {
			batch = t.Shape[0]
		}
	}
	p.c.mu.Lock()
	p.c.runs[batch]++
	p.c.mu.Unlock()
	return p.inner.Run(ctx, fn, in)
}

func (p countedPrepared) Close() error { return p.inner.Close() }

var _ = Describe("what a check and a reduction run", func() {
	ctx := context.Background()

	It("starts the invariance check from the run at the largest batch, not a second one", func() {
		e := newCounted(tampered{name: "counted", edit: func(*tensor.Tensor) {}})
		c := fuzz.Checker{Invariance: true, Executors: []executor.Executor{e}}
		rep, err := c.Check(ctx, []byte(rowsProgram))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
		// rowsProgram's batches are 1 and 4: one run at each, then the
		// invariance check at 4 (three rows alone at batch 1, the rows
		// reversed at 4, shifted at 5), from the run at 4 already made.
		Expect(e.runs).To(Equal(map[int]int{1: 1 + 3, 4: 1 + 1, 5: 1}))
		Expect(rep.Runs).To(Equal(2 * (2 + 5))) // oracle and counted alike
	})

	It("reduces a position finding without the reference's invariance runs, at the one batch that fails", func() {
		// The last element of every row of a batch of more than one row
		// moves by one ULP: only the invariance check sees it.
		tail := func(t *tensor.Tensor) {
			if len(t.Shape) == 2 && t.Shape[0] > 1 {
				for r := range t.Shape[0] {
					i := r*t.Shape[1] + t.Shape[1] - 1
					t.F32[i] = math.Nextafter32(t.F32[i], float32(math.Inf(1)))
				}
			}
		}
		e := newCounted(tampered{name: "tail", edit: tail})
		c := &fuzz.Checker{Invariance: true, Executors: []executor.Executor{e}}
		rep, err := c.Check(ctx, []byte(rowsProgram))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(HaveLen(1))
		f := rep.Findings[0]
		Expect(f.Kind).To(Equal(fuzz.KindPosition))

		ref := newCounted(fallback.Executor{})
		c.Reference = ref
		small, st, err := fuzz.Reducer{}.ReduceFinding(ctx, []byte(rowsProgram), f, c)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Tested).To(BeNumerically(">", 1))
		// At batch 1 the rows shifted down by one are a batch of 2, which
		// the executor edits: batch 4 is dropped.
		Expect(string(small)).To(ContainSubstring("//rx:batches 1\n"))
		Expect(strings.Count(string(small), "func ")).To(Equal(1))
		// The reference runs once per candidate and batch, never for its
		// own invariance: no batch of 5 (the rows of 4 shifted down by
		// one), which no candidate has.
		Expect(ref.runs[4]).To(BeNumerically(">", 0))
		Expect(ref.runs[5]).To(BeZero(), "the reference's rows shifted: %v", ref.runs)
		Expect(e.total()).To(BeNumerically(">", ref.total()), "the finding's executor ran its invariance")

		again, err := c.Check(ctx, small)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Has(f.Signature())).To(BeTrue(), "the reduced program still shows it:\n%s", small)
	})
})

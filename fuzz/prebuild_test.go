package fuzz_test

import (
	"context"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// recorder is the fallback interpreter recording, by their printed IR,
// the programs it is asked to prebuild and to prepare.
type recorder struct {
	mu                 sync.Mutex
	prebuilt, prepared []string
}

func (r *recorder) Name() executor.Name { return "recorder" }

func (r *recorder) Prebuild(_ context.Context, ps []*ir.Program) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		r.prebuilt = append(r.prebuilt, p.File+"\n"+p.String())
	}
	return nil
}

func (r *recorder) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	r.mu.Lock()
	r.prepared = append(r.prepared, p.File+"\n"+p.String())
	r.mu.Unlock()
	return fallback.Executor{}.Prepare(ctx, f, p)
}

var _ = Describe("Checker.Prebuild", func() {
	It("hands a Prebuilder exactly the programs, variants included, that Check then prepares", func() {
		rec := &recorder{}
		c := &fuzz.Checker{Executors: []executor.Executor{fallback.Executor{}, rec}, Metamorphic: 1}
		var srcs [][]byte
		for seed := uint64(1); seed <= 6; seed++ {
			srcs = append(srcs, fuzz.Generate(seed, fuzz.Config{}).Source)
		}
		Expect(c.Prebuild(context.Background(), srcs)).To(Succeed())
		for _, src := range srcs {
			rep, err := c.Check(context.Background(), src)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.OK()).To(BeTrue(), "%v", rep.Findings)
		}
		Expect(len(rec.prepared)).To(BeNumerically(">", len(srcs)), "some variants were checked")
		Expect(rec.prebuilt).To(ConsistOf(rec.prepared))
	})

	It("does nothing without a Prebuilder, and skips a source that does not check", func() {
		c := &fuzz.Checker{}
		Expect(c.Prebuild(context.Background(), [][]byte{[]byte("package p\nfunc")})).To(Succeed())
		rec := &recorder{}
		c = &fuzz.Checker{Executors: []executor.Executor{rec}}
		Expect(c.Prebuild(context.Background(), [][]byte{[]byte("package p\nfunc"), fuzz.Generate(3, fuzz.Config{}).Source})).To(Succeed())
		Expect(rec.prebuilt).To(HaveLen(1))
	})
})

// prebuildingSkewed is a skewed executor that records, by printed IR, the
// programs it is asked to prebuild (and the size of each batch) and to
// prepare.
type prebuildingSkewed struct {
	skewed
	mu                 sync.Mutex
	prebuilt, prepared []string
	builds             []int
}

func (s *prebuildingSkewed) Prebuild(_ context.Context, ps []*ir.Program) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ps {
		s.prebuilt = append(s.prebuilt, p.File+"\n"+p.String())
	}
	s.builds = append(s.builds, len(ps))
	return nil
}

func (s *prebuildingSkewed) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	s.mu.Lock()
	s.prepared = append(s.prepared, p.File+"\n"+p.String())
	s.mu.Unlock()
	return s.skewed.Prepare(ctx, f, p)
}

package executor_test

import (
	"context"
	"errors"
	"io"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

func TestExecutor(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "executor")
}

// fake is an executor whose Prepare does what its fields say: panic
// with panics when it is not nil, else return prep and err.
type fake struct {
	panics any
	prep   executor.Prepared
	err    error
}

func (fake) Name() executor.Name { return "fake" }

func (f fake) Prepare(context.Context, *program.File, *ir.Program) (executor.Prepared, error) {
	if f.panics != nil {
		panic(f.panics)
	}
	return f.prep, f.err
}

type nop struct{}

func (nop) Run(context.Context, string, map[string]*tensor.Tensor) (executor.Outcome, error) {
	return executor.Outcome{}, nil
}
func (nop) Close() error { return nil }

var _ = Describe("SafePrepare", func() {
	ctx := context.Background()

	It("returns what Prepare returns", func() {
		pp, err := executor.SafePrepare(ctx, fake{prep: nop{}}, nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(pp).To(Equal(nop{}))

		failed := errors.New("no compiler")
		pp, err = executor.SafePrepare(ctx, fake{err: failed}, nil, nil)
		Expect(err).To(BeIdenticalTo(failed))
		Expect(pp).To(BeNil())
	})

	It("turns a panic into an executor error naming the executor", func() {
		pp, err := executor.SafePrepare(ctx, fake{panics: "index out of range"}, nil, nil)
		Expect(pp).To(BeNil())
		Expect(errors.Is(err, executor.ErrExecutor)).To(BeTrue())
		Expect(err).To(MatchError("executor error: fake: panic while preparing: index out of range"))
	})

	It("fails a Prepare that returns neither a program nor an error", func() {
		pp, err := executor.SafePrepare(ctx, fake{}, nil, nil)
		Expect(pp).To(BeNil())
		Expect(errors.Is(err, executor.ErrExecutor)).To(BeTrue())
		Expect(err).To(MatchError("executor error: fake: Prepare returned neither a program nor an error"))
	})
})

// slotter is an executor.Slotter whose slots record their directory; it
// sets *closed when a slot is released.
type slotter struct {
	fake
	closed *bool
}

type slot struct {
	fake
	dir string
}

type closer struct{ closed *bool }

func (c closer) Close() error { *c.closed = true; return nil }

func (s slotter) Slot(dir string) (executor.Executor, io.Closer) {
	return slot{dir: dir}, closer{s.closed}
}

var _ = Describe("SlotOf", func() {
	It("returns a Slotter's slot and what releases it", func() {
		closed := false
		e, c := executor.SlotOf(slotter{closed: &closed}, "/build")
		Expect(e).To(Equal(slot{dir: "/build"}))
		Expect(closed).To(BeFalse())
		Expect(c.Close()).To(Succeed())
		Expect(closed).To(BeTrue())
	})

	It("returns any other executor itself, with nothing to release", func() {
		failed := errors.New("x")
		e, c := executor.SlotOf(fake{err: failed}, "/build")
		Expect(e).To(Equal(fake{err: failed}))
		Expect(c.Close()).To(Succeed())
	})
})

package harness_test

import (
	"context"
	"errors"
	"sync/atomic"

	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/internal/testprog"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

func parseRx(name, src string) *program.File {
	f, err := program.Parse(name, []byte(src))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return f
}

func tinyFile() *program.File { return testprog.Tiny() }

// hookExecutor wraps another executor and lets a test alter its runs.
type hookExecutor struct {
	name  executor.Name
	inner executor.Executor
	// before is called before the inner Run (it may block or fail);
	// after may change the outcome or the inputs.
	before func(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) error
	after  func(fn string, inputs map[string]*tensor.Tensor, out *executor.Outcome, err *error)
	closed *atomic.Int32
}

func (h hookExecutor) Name() executor.Name { return h.name }

func (h hookExecutor) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := h.inner.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	return hookPrepared{h: h, inner: inner}, nil
}

type hookPrepared struct {
	h     hookExecutor
	inner executor.Prepared
}

func (p hookPrepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	if p.h.before != nil {
		if err := p.h.before(ctx, fn, inputs); err != nil {
			return executor.Outcome{Path: p.h.name}, err
		}
	}
	out, err := p.inner.Run(ctx, fn, inputs)
	out.Path = p.h.name
	if p.h.after != nil {
		p.h.after(fn, inputs, &out, &err)
	}
	return out, err
}

func (p hookPrepared) Close() error {
	if p.h.closed != nil {
		p.h.closed.Add(1)
	}
	return p.inner.Close()
}

// failingPrepare is an executor whose Prepare always fails.
type failingPrepare struct{}

func (failingPrepare) Name() executor.Name { return "broken" }
func (failingPrepare) Prepare(context.Context, *program.File, *ir.Program) (executor.Prepared, error) {
	return nil, errors.New("no toolchain here")
}

// caseNames lists the names of the cases, in result order.
func caseNames(cs []harness.Case) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}

// byExecutor keeps the cases of one executor.
func byExecutor(cs []harness.Case, name executor.Name) []harness.Case {
	var out []harness.Case
	for _, c := range cs {
		if c.Executor == name {
			out = append(out, c)
		}
	}
	return out
}

func onlyFallback() harness.Options {
	return harness.Options{Executors: []executor.Executor{fallback.Executor{}}}
}

package fallback

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Executor is the float32 interpreter of the lowered IR as an
// executor.Executor. Prepare validates every function once.
type Executor struct{}

// Name returns executor.Fallback.
func (Executor) Name() executor.Name { return executor.Fallback }

// Prepare builds one Interpreter per function.
func (Executor) Prepare(_ context.Context, _ *program.File, p *ir.Program) (executor.Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: fallback: nil program", executor.ErrExecutor)
	}
	its := make(map[string]*Interpreter, len(p.Funcs))
	for _, fn := range p.Funcs {
		it, err := New(fn)
		if err != nil {
			return nil, fmt.Errorf("fallback: preparing %s: %w", fn.Name, err)
		}
		its[fn.Name] = it
	}
	return prepared{its: its}, nil
}

// MemoryProfile: float32, reading the runner's inputs in place.
func (Executor) MemoryProfile() executor.MemoryProfile {
	return executor.MemoryProfile{FloatBytes: 4, InPlace: true}
}

type prepared struct {
	its map[string]*Interpreter
}

func (f prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	it := f.its[fn]
	if it == nil {
		return executor.Outcome{Path: executor.Fallback}, fmt.Errorf("%w: fallback: no function %q", executor.ErrExecutor, fn)
	}
	out, err := it.Run(ctx, inputs)
	return executor.Outcome{Outputs: out, Path: executor.Fallback}, err
}

func (prepared) Close() error { return nil }

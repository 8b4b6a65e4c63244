package oracle

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Executor is the float64 reference as an executor.Executor: it evaluates
// the checked tree (never the IR), so a lowering bug cannot hide in the
// reference and the others alike. It is the runner's default reference.
type Executor struct{}

// Name returns executor.Oracle.
func (Executor) Name() executor.Name { return executor.Oracle }

// Prepare keeps the checked file; the oracle needs no preparation.
func (Executor) Prepare(_ context.Context, f *program.File, _ *ir.Program) (executor.Prepared, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: oracle: nil program", executor.ErrExecutor)
	}
	return prepared{f: f}, nil
}

// MemoryProfile: float64 elements, the inputs widened into a copy.
func (Executor) MemoryProfile() executor.MemoryProfile {
	return executor.MemoryProfile{FloatBytes: 8}
}

// RunRounded runs fn rounding every op's result to float32 (to nearest),
// as Options.Nearest does: what float32 arithmetic itself gives.
func (Executor) RunRounded(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	return RunWith(ctx, fn, inputs, Options{Nearest: true})
}

type prepared struct{ f *program.File }

func (o prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	f := o.f.Func(fn)
	if f == nil {
		return executor.Outcome{Path: executor.Oracle}, fmt.Errorf("%w: oracle: no function %q", executor.ErrExecutor, fn)
	}
	out, err := Run(ctx, f, inputs)
	return executor.Outcome{Outputs: out, Path: executor.Oracle}, err
}

func (prepared) Close() error { return nil }

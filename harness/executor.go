package harness

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Executor is one way of running a scoring program: the oracle, the
// fallback interpreter, the native backend, or one a user writes.
//
// An executor sees both forms of a program, the checked tree (what the
// oracle evaluates) and the lowered IR (what fallback and native run), and
// picks the one it needs. Prepare does the per-program work once (the
// native backend generates, compiles and loads C there); the runner then
// calls Run on the Prepared program for every function and batch.
//
// The interface carries only tensors and names, so an executor backed by
// another framework fits without changes to the runner: for example a
// TensorFlow executor, where that library is available, would translate
// the IR (or the tree) into a graph in Prepare, feed the inputs by
// parameter name in Run and return the fetched tensors by result name with
// Path "tensorflow". Its float outputs are compared with the oracle like
// everyone else's.
type Executor interface {
	// Name identifies the executor in results and in Options.Backends
	// ("oracle", "fallback", "native", "torch").
	Name() string
	// Prepare readies every function of one program. f and p are the same
	// program (p = program.Lower(f)); neither may be modified.
	Prepare(ctx context.Context, f *program.File, p *ir.Program) (Prepared, error)
}

// Prepared is a program an Executor has readied.
//
// Run executes function fn on inputs (keyed by parameter name; int64
// scalar parameters are rank-0 int64 tensors) and returns its outputs by
// result name. It must not modify the inputs: the runner hashes them
// before and after every run and fails a case whose inputs changed. Run
// must be safe for concurrent use (the runner runs several functions and
// batches of one program at once) and should return promptly, with an
// error wrapping ctx.Err(), once ctx is done; a Run that does not is
// abandoned by the runner at the case timeout. Runtime errors of the
// program should be *ir.RuntimeError values with the shared texts, so they
// compare equal to the oracle's.
//
// Close releases what Prepare acquired; the runner calls it once, after
// the last Run.
type Prepared interface {
	Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (Outcome, error)
	Close() error
}

// Outcome is what one Run produced.
type Outcome struct {
	Outputs map[string]*tensor.Tensor // by result name
	// Path names what actually ran: "oracle", "fallback", "native" (or a
	// user executor's own name). An executor that can route a function
	// elsewhere (native in auto mode) says so here.
	Path string
}

// Path names of the built-in executors.
const (
	PathOracle   = "oracle"
	PathFallback = "fallback"
	PathNative   = "native"
)

// OracleExecutor is the float64 reference: it evaluates the checked tree
// with package oracle.
type OracleExecutor struct{}

// Name returns "oracle".
func (OracleExecutor) Name() string { return PathOracle }

// Prepare keeps the checked file; the oracle needs no preparation.
func (OracleExecutor) Prepare(_ context.Context, f *program.File, _ *ir.Program) (Prepared, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: oracle: nil program", ErrExecutor)
	}
	return oraclePrepared{f: f}, nil
}

type oraclePrepared struct{ f *program.File }

func (o oraclePrepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (Outcome, error) {
	f := o.f.Func(fn)
	if f == nil {
		return Outcome{Path: PathOracle}, fmt.Errorf("%w: oracle: no function %q", ErrExecutor, fn)
	}
	out, err := oracle.Run(ctx, f, inputs)
	return Outcome{Outputs: out, Path: PathOracle}, err
}

func (oraclePrepared) Close() error { return nil }

// FallbackExecutor is the float32 pure-Go interpreter of the lowered IR
// (package fallback). Prepare validates every function once.
type FallbackExecutor struct{}

// Name returns "fallback".
func (FallbackExecutor) Name() string { return PathFallback }

// Prepare builds one fallback.Interpreter per function.
func (FallbackExecutor) Prepare(_ context.Context, _ *program.File, p *ir.Program) (Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: fallback: nil program", ErrExecutor)
	}
	its := make(map[string]*fallback.Interpreter, len(p.Funcs))
	for _, fn := range p.Funcs {
		it, err := fallback.New(fn)
		if err != nil {
			return nil, fmt.Errorf("fallback: preparing %s: %w", fn.Name, err)
		}
		its[fn.Name] = it
	}
	return fallbackPrepared{its: its}, nil
}

type fallbackPrepared struct {
	its map[string]*fallback.Interpreter
}

func (f fallbackPrepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (Outcome, error) {
	it := f.its[fn]
	if it == nil {
		return Outcome{Path: PathFallback}, fmt.Errorf("%w: fallback: no function %q", ErrExecutor, fn)
	}
	out, err := it.Run(ctx, inputs)
	return Outcome{Outputs: out, Path: PathFallback}, err
}

func (fallbackPrepared) Close() error { return nil }

package harness

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// PathTorch is the name and path of the torch executor.
const PathTorch = "torch"

// TorchExecutor runs the same generated C as NativeExecutor, linked against
// the torch runtime: rx_runtime.h implemented over libtorch's ATen kernels
// (native.RuntimeTorch). Its Prepared values implement NativePrepared, and
// its Source is byte-identical to the native executor's, so every source
// lock holds for both.
//
// It needs libtorch (Debian's libtorch-dev) and a C++17 compiler; without
// libtorch, Prepare fails with an error wrapping native.ErrNoTorch.
// Options.Runtime is ignored (always torch); Options.TorchThreads sets the
// intra-op thread count (1 when zero).
type TorchExecutor struct {
	Options native.Options
}

// Name returns "torch".
func (TorchExecutor) Name() string { return PathTorch }

// Prepare generates the program's C, builds it against the torch runtime
// (compiling that runtime into the cache the first time) and loads it.
func (t TorchExecutor) Prepare(ctx context.Context, _ *program.File, p *ir.Program) (Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: torch: nil program", ErrExecutor)
	}
	opts := t.Options
	opts.Runtime = native.RuntimeTorch
	prog, err := native.Compile(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	return nativePrepared{p: prog}, nil
}

// TorchAvailable reports whether the torch executor can run here: nil, or
// why not: an error wrapping native.ErrUnavailable when rxeq was built
// without cgo (see NativeAvailable), else one wrapping native.ErrNoTorch
// that names the Debian package libtorch-dev when libtorch is not
// installed.
func TorchAvailable() error {
	if err := NativeAvailable(); err != nil {
		return err
	}
	_, err := runtime.FindTorch()
	return err
}

// Unavailable is a default executor left out of a run, and why.
type Unavailable struct {
	Executor string
	Reason   string
}

// DefaultExecutorSet returns the executors compared against the oracle by
// default: the fallback interpreter, the native backend in the given mode,
// and the torch executor (with torchThreads intra-op threads) when libtorch
// is installed. When it is not, torch is left out and named in the second
// result with the reason, so that callers can say so: never a silent pass.
// When rxeq was built without cgo, native and torch are both left out and
// named, with NativeAvailable's reason.
func DefaultExecutorSet(mode native.Mode, torchThreads int) ([]Executor, []Unavailable) {
	execs := DefaultExecutors(mode)
	if err := NativeAvailable(); err != nil {
		execs, unavailable := LeaveOutNative(execs, nil)
		return execs, append(unavailable, Unavailable{Executor: PathTorch, Reason: err.Error()})
	}
	if err := TorchAvailable(); err != nil {
		return execs, []Unavailable{{Executor: PathTorch, Reason: err.Error()}}
	}
	return append(execs, TorchExecutor{Options: native.Options{Mode: mode, TorchThreads: torchThreads}}), nil
}

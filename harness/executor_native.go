package harness

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// NativeExecutor compiles the lowered IR to C with package native, builds
// it through the build cache and runs it through cgo.
//
// The zero value is the harness's executor: forced mode (anything the
// backend cannot compile, or a missing compiler, is an error; nothing runs
// elsewhere). With Options.Mode = native.Auto a function the backend cannot
// run goes to the fallback interpreter and Outcome.Path says "fallback".
type NativeExecutor struct {
	Options native.Options
}

// Name returns "native".
func (NativeExecutor) Name() string { return PathNative }

// Prepare generates, compiles (or finds in the cache) and loads the
// program's C.
func (n NativeExecutor) Prepare(ctx context.Context, _ *program.File, p *ir.Program) (Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: native: nil program", ErrExecutor)
	}
	prog, err := native.Compile(ctx, p, n.Options)
	if err != nil {
		return nil, err
	}
	return nativePrepared{p: prog}, nil
}

// NativePrepared is implemented by the native executor's Prepared value: it
// exposes the generated C (for the source lock) and how it was built.
type NativePrepared interface {
	Prepared
	Source() []byte
	Info() native.BuildInfo
}

type nativePrepared struct{ p *native.Program }

func (n nativePrepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (Outcome, error) {
	res, err := n.p.Run(ctx, fn, inputs)
	if err != nil {
		path, _ := n.p.PathOf(fn)
		if path == "" {
			path = native.PathNative
		}
		return Outcome{Path: string(path)}, err
	}
	return Outcome{Outputs: res.Outputs, Path: string(res.Path)}, nil
}

func (n nativePrepared) Close() error           { return n.p.Close() }
func (n nativePrepared) Source() []byte         { return n.p.Source() }
func (n nativePrepared) Info() native.BuildInfo { return n.p.Info() }

// DefaultExecutors returns the executors compared against the oracle by
// default: the fallback interpreter and the native backend in the given
// mode (native.Forced for the harness). It includes native in every
// build; DefaultExecutorSet, or LeaveOutNative on this list, leaves it out
// of a build without cgo and says why.
func DefaultExecutors(mode native.Mode) []Executor {
	return []Executor{FallbackExecutor{}, NativeExecutor{Options: native.Options{Mode: mode}}}
}

package native

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Executor is the native backend in this process as an
// executor.Executor: Prepare compiles the lowered IR to C, builds it
// through the build cache and loads it; Run calls it through cgo.
//
// It is named executor.Native, or executor.Torch when Options.Runtime is
// executor.Torch: the same generated C linked against the runtime over
// libtorch's ATen kernels (which needs libtorch: Prepare then fails with
// an error wrapping ErrNoTorch). The generated C is byte-identical for
// both, so every source lock holds for both; Prepared values implement
// executor.Built.
//
// The zero value is the harness's executor: forced mode (anything the
// backend cannot compile, or a missing compiler, is an error; nothing runs
// elsewhere). With Options.Mode = Auto a function the backend cannot run
// goes to the fallback interpreter and Outcome.Path says so.
type Executor struct {
	Options Options
	// Variant, when not "", is the executor's name as a variant of native
	// (or torch) that must give exactly its bits, such as
	// executor.NativeAVX2 (Options.ISA "avx2") or executor.NativeTiled
	// (a small Options.TileRows): TwinOf then names native (or torch).
	Variant executor.Name
}

// Name returns the Variant, or executor.Native, or executor.Torch for
// the torch runtime.
func (e Executor) Name() executor.Name {
	if e.Variant != "" {
		return e.Variant
	}
	return baseName(e.Options)
}

// TwinOf returns the executor a Variant must agree with bit for bit
// (executor.Twin): native, or torch for the torch runtime; "" when e is
// not a variant.
func (e Executor) TwinOf() executor.Name {
	if e.Variant == "" || e.Variant == baseName(e.Options) {
		return ""
	}
	return baseName(e.Options)
}

// baseName is the name of the executor that runs o: executor.Native, or
// executor.Torch for the torch runtime.
func baseName(o Options) executor.Name {
	if o.Runtime == executor.Torch {
		return executor.Torch
	}
	return executor.Native
}

// BaseName is the name of the executor that runs o, whatever its
// variant: executor.Native, or executor.Torch for the torch runtime.
func BaseName(o Options) executor.Name { return baseName(o) }

// Prepare generates, compiles (or finds in the cache) and loads the
// program's C.
func (e Executor) Prepare(ctx context.Context, _ *program.File, p *ir.Program) (executor.Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: %s: nil program", executor.ErrExecutor, e.Name())
	}
	prog, err := Compile(ctx, p, e.Options)
	if err != nil {
		return nil, err
	}
	return prepared{p: prog, variant: e.Variant}, nil
}

// MemoryProfile: float32, reading the runner's inputs in place. The
// torch runtime is counted with a copy of the inputs besides: ATen's
// views are over the call's own memory, but libtorch may keep buffers of
// its own, and the budget is an upper bound.
func (e Executor) MemoryProfile() executor.MemoryProfile {
	return executor.MemoryProfile{FloatBytes: 4, InPlace: baseName(e.Options) == executor.Native}
}

// NeedsCompiler returns true: the executor runs compiled C.
func (Executor) NeedsCompiler() bool { return true }

type prepared struct {
	p       *Program
	variant executor.Name // Executor.Variant: the Path of what the program itself ran
}

func (n prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	res, err := n.p.Run(ctx, fn, inputs)
	if err != nil {
		path, _ := n.p.PathOf(fn)
		if path == "" {
			path = n.p.path
		}
		return executor.Outcome{Path: n.pathOf(path)}, err
	}
	return executor.Outcome{Outputs: res.Outputs, Path: n.pathOf(res.Path)}, nil
}

// pathOf names path as the variant when the compiled program ran it.
func (n prepared) pathOf(path executor.Name) executor.Name {
	if n.variant != "" && path == n.p.path {
		return n.variant
	}
	return path
}

func (n prepared) Close() error    { return n.p.Close() }
func (n prepared) Source() []byte  { return n.p.Source() }
func (n prepared) Info() BuildInfo { return n.p.Info() }

var _ executor.Built = prepared{}

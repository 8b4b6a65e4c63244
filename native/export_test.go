package native

import (
	"context"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native/build"
	"github.com/rextio/rxeq/native/cgen"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// CMacroNames returns the committed macro list (cgen's cmacros_gen.go),
// for the tests of package native_test.
func CMacroNames() []string { return cgen.MacroNames() }

// WellFormed is the hot path's verdict on a tensor (wellFormed), for the
// spec that holds it to tensor.Validate.
func WellFormed(t *tensor.Tensor) bool { return wellFormed(t) }

// RawStatus is the outcome of InvokeSource: rx_status's code and operands
// and the error Go would make of it.
type RawStatus struct {
	Code, A, B int64
	Counters   Counters
	Err        error
}

// The status codes the white-box tests look for.
const (
	StatusKernel   = rxEKernel
	StatusInternal = rxEInternal
)

// InvokeSource builds a hand-written C translation unit src against the
// runtime opts.Runtime selects (through the cache opts.CacheDir), calls its
// function fn with args (inputs, then outputs) and returns the raw status:
// white-box tests use it to reach runtime paths a checked program never
// takes.
func InvokeSource(ctx context.Context, opts Options, src, fn string, args ...*tensor.Tensor) (RawStatus, error) {
	p := &Program{frames: newFramePool()}
	var err error
	if p.path, err = runtimePath(opts.Runtime); err != nil {
		return RawStatus{}, err
	}
	cc, err := build.FindCompiler(ctx, opts.CC, opts.CompileTimeout, "")
	if err != nil {
		return RawStatus{}, err
	}
	dir, err := build.CacheDir(opts.CacheDir)
	if err != nil {
		return RawStatus{}, err
	}
	var rtPath, rtKey string
	if p.path == executor.Torch {
		rtPath, rtKey, err = p.torchRuntime(ctx, cc, dir, opts)
	} else {
		rtPath, rtKey, err = build.BuildRuntime(ctx, runtime.Native(), cc, dir, opts.CompileTimeout)
	}
	if err != nil {
		return RawStatus{}, err
	}
	tc := &build.Toolchain{Dir: dir, CC: cc, RuntimePath: rtPath, RuntimeKey: rtKey, Timeout: opts.CompileTimeout}
	so, _, err := tc.Program(ctx, []byte(src))
	if err != nil {
		return RawStatus{}, err
	}
	lib, err := loadLibrary(so)
	if err != nil {
		return RawStatus{}, err
	}
	defer lib.close()
	entry, err := lib.symbol(fn)
	if err != nil {
		return RawStatus{}, err
	}
	fr := p.frames.get(len(args))
	defer func() {
		p.frames.put(fr, nil)
		p.frames.drain()
	}()
	for i, t := range args {
		fr.setArg(i, t)
	}
	st := fr.invoke(entry, 0, 0, 0, 0)
	rs := RawStatus{Code: st.code, A: st.a, B: st.b, Counters: st.counters}
	if st.code == rxEKernel {
		rs.Err = kernelError(fn, st.a)
	}
	return rs, nil
}

// TorchRuntimeKey is the cache key of the torch runtime lib would get with
// the compilers opts names.
func TorchRuntimeKey(ctx context.Context, opts Options, lib runtime.Lib) (string, error) {
	cc, err := build.FindCompiler(ctx, opts.CC, opts.CompileTimeout, "")
	if err != nil {
		return "", err
	}
	cxx, err := build.FindCXX(ctx, opts.CXX, opts.CompileTimeout)
	if err != nil {
		return "", err
	}
	return build.TorchRuntimeKey(lib, cc, cxx), nil
}

// RowSeparable reports whether function fn of p runs in row tiles when its
// batch is large (tile.go's rowPlanOf), for the specs of its rules.
func RowSeparable(p *ir.Program, fn string) bool {
	_, metas, _ := generate(p)
	m := metas[fn]
	return m != nil && m.rows != nil
}

// DefaultTileRows is the rows per tile a call of fn of p with a batch of
// rows takes when Options.TileRows is 0 (0: not tiled), with every other
// symbol of the function bound to syms[name].
func DefaultTileRows(p *ir.Program, fn string, rows int, syms map[string]int) int {
	_, metas, _ := generate(p)
	m := metas[fn]
	if m == nil || m.rows == nil {
		return 0
	}
	var env symEnv
	for k, s := range m.Syms {
		env.sym[k], env.bound = syms[s], env.bound|1<<k
	}
	env.sym[m.rows.sym] = rows
	return m.rows.tileRows(&env, rows, 0)
}

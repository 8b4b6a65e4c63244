package native

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/native/build"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Mode says what Compile and Run do with what the native backend cannot run.
type Mode int

const (
	// Forced (the default, the harness's): anything unsupported, and any
	// failure to build or load, is an error; nothing ever runs elsewhere.
	Forced Mode = iota
	// Auto (for library users): native where supported and buildable, the
	// fallback interpreter otherwise; Result.Path says which ran.
	Auto
)

// String returns "forced" or "auto".
func (m Mode) String() string {
	if m == Auto {
		return "auto"
	}
	return "forced"
}

// ParseMode reads "forced" or "auto".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "forced", "":
		return Forced, nil
	case "auto":
		return Auto, nil
	}
	return Forced, fmt.Errorf("unknown native mode %q (want forced or auto)", s)
}

// Path names the executor that produced a Result: executor.Native,
// executor.Torch, or executor.Fallback for a function Auto mode ran on
// the interpreter.
type Path = executor.Name

// Options configure Compile. The zero value is usable. Nothing in this
// package reads the environment: the rxeq command (and a library user who
// wants the same) fills Options from $CC, $CXX, $RXEQ_CACHE,
// $RXEQ_RUNTIME_CACHE, $RXEQ_PROGRAM_CC, $RXEQ_NATIVE_ISA and
// $RXEQ_TORCH_ROOT through executor/builtin's Config.FromEnv.
type Options struct {
	// CC is the C compiler command; default "cc". It may carry
	// arguments ("gcc -m64"), split on spaces.
	CC string
	// CacheDir is the build cache; default
	// os.UserCacheDir()/rxeq. It must be private to the current user.
	CacheDir string
	// Mode is Forced (default) or Auto.
	Mode Mode
	// RuntimeCacheDir is where the runtime library is built and looked up;
	// default the cache directory. A session
	// that keeps its programs in a throwaway cache (rxeq fuzz) keeps the
	// runtime, which every later session reuses, in the user's cache. It
	// is held to the same rules as CacheDir.
	RuntimeCacheDir string
	// ProgramCC is the C compiler of the program's own translation unit;
	// default CC. The runtime library, which holds
	// every float kernel, is always built with CC; a program's C holds
	// only control flow, integer scalars and calls into the runtime (no
	// float arithmetic), so a fast non-optimising compiler such as tcc
	// (which `rxeq fuzz` uses for its candidates when installed) changes
	// no result, only the build time. It is part of the program's cache
	// key.
	ProgramCC string
	// CompileTimeout bounds each compiler run (DefaultCompileTimeout when
	// zero). A run that exceeds it is killed with its children and the
	// build fails with ErrCompiler.
	CompileTimeout time.Duration
	// Runtime selects the runtime library the generated C is linked
	// against: executor.Native ("" or "native", rxeq's own kernels) or
	// executor.Torch ("torch", libtorch's ATen kernels; needs libtorch, see
	// ErrNoTorch). The generated C is the same for both; Result.Path names
	// the runtime.
	Runtime executor.Name
	// CXX is the C++ compiler of the torch runtime; default
	// "c++". It may carry arguments.
	CXX string
	// TileRows is the number of rows per tile when the native runtime
	// runs a large batch of a row-separable function in row tiles: the
	// call's one invocation validates the inputs once, then runs the
	// function's body once per tile over sub-views of the inputs and
	// outputs, so that its intermediates stay in cache (the
	// outputs are the same bits as one invocation's; docs/native.md says
	// when a call is tiled). 0 chooses from the function's bytes per row
	// (a multiple of 64 from 64 to 4096: 384 to 1408 rows for the
	// reference scenario), more when each tile would repeat much work
	// that reads no batch value; a negative value never tiles. The torch
	// runtime never tiles.
	TileRows int
	// TorchThreads is the torch runtime's intra-op thread count (0 means
	// 1). It is a process-wide libtorch setting: the latest Compile of a
	// torch program sets it for every torch program of the process.
	TorchThreads int
	// ISA caps the instruction set of the native runtime's kernels: one
	// of runtime.ISAs ("c", "sse2", "avx2", "avx512"), or "" for the
	// widest this CPU supports. It is part of the runtime's cache key.
	ISA string
	// CallISA is the instruction set every call's kernels run at, one of
	// runtime.ISAs up to the library's widest (ISA); "" for the widest.
	// Unlike ISA it changes no build: one runtime library, loaded once,
	// runs its kernels at any ISA up to its widest, chosen per call
	// (CallOptions.ISA), so native-avx2, native-sse2 and native-c share
	// native's library and, in a worker, native's process. Each call
	// checks that the runtime ran the kernels it asked for (ErrISA).
	CallISA string
	// TorchRoot is a libtorch prefix (its include/ and lib/) to use
	// instead of the usual places, "" for those (runtime.FindTorch).
	TorchRoot string
}

// Result is the outcome of one Run.
type Result struct {
	Outputs map[string]*tensor.Tensor // by result name (nil when the function has none)
	Path    Path                      // which executor ran
	// ISA is the instruction set the native kernels of the call ran at
	// (one of runtime.ISAs: Options.CallISA or CallOptions.ISA, else the
	// library's widest); "" for the torch runtime and the fallback.
	ISA string
	blk *outBlock // the memory of a native Run's outputs (Release)
}

// Counters are the invocation-context counters of a Program, summed over
// all its native calls (and the number of fallback runs). After any number
// of complete calls: Invocations = Calls (one invocation context per
// call), BoundaryValidations = Calls × inputs (whatever the tiling),
// ResultValidations = the tensor op results produced, FactQueries =
// BoundaryValidations + ResultValidations, FactRequeries = 0, ArenaAllocs =
// ArenaReleases. A call's body runs once, or once per row tile inside the
// call's context when it runs a large batch in tiles (Tiles; see
// Options.TileRows).
type Counters struct {
	Calls               int64 // native calls
	Invocations         int64 // invocations of generated functions (and contexts opened): one per call
	Tiles               int64 // passes of the generated bodies: one per call, or one per row tile of a tiled call
	BoundaryValidations int64 // inputs validated on entry, once per input per call
	ResultValidations   int64 // op results validated before their facts were stamped
	FactQueries         int64 // facts derived from raw data (one per validation)
	FactRequeries       int64 // facts asked for again after stamping (must be 0)
	ArenaAllocs         int64 // arena buffers allocated
	ArenaReleases       int64 // arena buffers released
	FallbackRuns        int64 // runs on the fallback interpreter (Auto)
	KernelCalls         int64 // framework kernel calls (torch runtime; 0 for native)
	TrustedReuses       int64 // operand facts read from a stamped slot, not re-derived
}

// Program is a compiled, loaded program. Its methods are safe for
// concurrent use; the library stays loaded until Close.
type Program struct {
	ir     *ir.Program
	src    []byte
	mode   Mode
	path   Path // the runtime's path: executor.Native or executor.Torch
	lib    *library
	libErr error // why nothing runs natively (Auto), or nil
	info   BuildInfo
	funcs  map[string]*compiled
	last   atomic.Pointer[compiled] // the function the last call looked up (funcOf)

	mu           sync.RWMutex // Run holds it shared; Close exclusively
	closed       bool
	fallbackRuns atomic.Int64
	frames       *framePool // call frames and their arenas (see frame.go)
	def          callOpts   // how Run calls: Options.TileRows and Options.CallISA
	maxISA       int        // the runtime library's widest ISA (an index of runtime.ISAs), -1 for torch
}

// BuildInfo describes how a Program was built.
type BuildInfo = executor.BuildInfo

// compiled is one function: native (entry != nil) or on the fallback.
type compiled struct {
	name     string
	meta     *funcMeta
	entry    unsafe.Pointer
	fallback *fallback.Interpreter
	reason   error // why it is not native
}

// Compile generates C for p, builds it through the cache and loads it. In
// Forced mode any unsupported function, missing compiler, compile or cache
// failure is an error. In Auto mode those functions (or, when the build
// fails, all of them) run on the fallback instead; NativeError reports why.
func Compile(ctx context.Context, p *ir.Program, opts Options) (*Program, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil program", ErrInternal)
	}
	path, err := runtimePath(opts.Runtime)
	if err != nil {
		return nil, err
	}
	src, metas, bad := generate(p)
	if opts.Mode == Forced && len(bad) > 0 {
		return nil, bad[0].Err
	}
	prog, err := newProgram(p, src, opts, path)
	if err != nil {
		return nil, err
	}
	if len(metas) > 0 {
		if err := prog.load(ctx, src, opts); err != nil {
			if opts.Mode == Forced {
				return nil, err
			}
			prog.libErr = err
		}
	}
	if err := prog.bind(metas, bad, func(m *funcMeta) string { return m.CName }); err != nil {
		return nil, err
	}
	return prog, nil
}

// newProgram returns the Program of p (generated as src) before its
// library is loaded, with the call settings of opts checked against the
// runtime library that opts build (an error wrapping ErrISA).
func newProgram(p *ir.Program, src []byte, opts Options, path Path) (*Program, error) {
	prog := &Program{ir: p, src: src, mode: opts.Mode, path: path, funcs: map[string]*compiled{}, frames: newFramePool(), maxISA: -1}
	if path == executor.Native {
		isa, err := runtime.DetectISA(opts.ISA)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCompiler, err)
		}
		prog.maxISA = slices.Index(runtime.ISAs, isa)
	}
	var err error
	if prog.def, err = prog.resolve(CallOptions{TileRows: opts.TileRows, ISA: opts.CallISA}); err != nil {
		return nil, err
	}
	return prog, nil
}

// bind looks up every function's entry point in the loaded library (the
// symbol sym(meta) names; a batch member's are renamed) and sets up the
// fallback of those that do not run natively. On error the program is
// closed.
func (p *Program) bind(metas map[string]*funcMeta, bad []badFunc, sym func(*funcMeta) string) error {
	reasons := map[string]error{}
	for _, b := range bad {
		reasons[b.Func] = b.Err
	}
	for _, f := range p.ir.Funcs {
		c := &compiled{name: f.Name, meta: metas[f.Name], reason: reasons[f.Name]}
		if c.meta != nil && p.lib != nil {
			entry, err := p.lib.symbol(sym(c.meta))
			if err != nil {
				p.Close()
				return err
			}
			c.entry = entry
		} else if c.reason == nil {
			c.reason = p.libErr
		}
		if c.entry == nil {
			it, err := fallback.New(f)
			if err != nil {
				c.reason = fmt.Errorf("%w (and the fallback cannot run it: %v)", c.reason, err)
			}
			c.fallback = it
		}
		p.funcs[f.Name] = c
	}
	return nil
}

func (p *Program) load(ctx context.Context, src []byte, opts Options) error {
	if err := Available(); err != nil {
		return err // no compiler runs for code that could not be loaded
	}
	tc, err := p.toolchain(ctx, opts)
	if err != nil {
		return err
	}
	path, cached, err := tc.Program(ctx, src)
	if err != nil {
		return err
	}
	lib, err := loadLibrary(path)
	if err != nil {
		return err
	}
	p.lib, p.info.Library, p.info.Cached = lib, path, cached
	return nil
}

// toolchain resolves the cache, the compilers and the runtime library
// (building it when the cache has none), and records them in p.info.
func (p *Program) toolchain(ctx context.Context, opts Options) (*build.Toolchain, error) {
	dir, err := build.CacheDir(opts.CacheDir)
	if err != nil {
		return nil, err
	}
	cc, err := build.FindCompiler(ctx, opts.CC, opts.CompileTimeout, dir)
	if err != nil {
		return nil, err
	}
	p.info.Compiler = cc.FirstLine()
	rtDir := dir
	if d := opts.RuntimeCacheDir; d != "" {
		if rtDir, err = build.CacheDir(d); err != nil {
			return nil, err
		}
	}
	var rtPath, rtKey string
	if p.path == executor.Torch {
		rtPath, rtKey, err = p.torchRuntime(ctx, cc, rtDir, opts)
	} else {
		isa, ierr := runtime.DetectISA(opts.ISA)
		if ierr != nil {
			return nil, fmt.Errorf("%w: %w", ErrCompiler, ierr)
		}
		rt := runtime.NativeFor(isa)
		if !build.RuntimeBuilt(rt, cc, rtDir) && !cc.HasLib(ctx, "libsleef.so", opts.CompileTimeout) {
			rt = rt.WithoutSLEEF()
		}
		rtPath, rtKey, err = build.BuildRuntime(ctx, rt, cc, rtDir, opts.CompileTimeout)
	}
	if err != nil {
		return nil, err
	}
	pcc := cc
	if spec := opts.ProgramCC; spec != "" && spec != opts.CC {
		if pcc, err = build.FindCompiler(ctx, spec, opts.CompileTimeout, dir); err != nil {
			return nil, err
		}
	}
	if pcc != cc {
		p.info.Compiler += "; program: " + pcc.FirstLine()
	}
	p.info.Runtime = rtPath
	return &build.Toolchain{Dir: dir, CC: pcc, RuntimePath: rtPath, RuntimeKey: rtKey, Timeout: opts.CompileTimeout}, nil
}

// Source returns the generated C translation unit.
func (p *Program) Source() []byte { return append([]byte(nil), p.src...) }

// Info returns how the program was built.
func (p *Program) Info() BuildInfo { return p.info }

// NativeError returns why the library could not be built or loaded (Auto
// mode), or nil.
func (p *Program) NativeError() error { return p.libErr }

// PathOf returns the path Run takes for function fn, and the reason when
// it is the fallback.
func (p *Program) PathOf(fn string) (Path, error) {
	c := p.funcOf(fn)
	if c == nil {
		return "", fmt.Errorf("%w: %s", ErrUnknownFunc, fn)
	}
	if c.entry != nil {
		return p.path, nil
	}
	return executor.Fallback, c.reason
}

// Counters returns the counters summed over every call so far. It waits
// for the calls running at the time to end (as Close does), so that every
// call has put its counts back: the counts never go down from one read to
// the next.
func (p *Program) Counters() Counters {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.frames.counters()
	c.FallbackRuns = p.fallbackRuns.Load()
	return c
}

// Close unloads the library. It waits for running calls; later Runs fail
// with ErrClosed. Closing twice is a no-op.
func (p *Program) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.frames.drain()
	if p.lib != nil {
		return p.lib.close()
	}
	return nil
}

// funcOf returns function fn, or nil. A loop that calls one function
// finds it without a map lookup: the last function looked up is kept
// (its name compares equal at once when the caller passes the same
// string), and any other name goes through the map.
func (p *Program) funcOf(fn string) *compiled {
	if c := p.last.Load(); c != nil && c.name == fn {
		return c
	}
	c := p.funcs[fn]
	if c != nil {
		p.last.Store(c)
	}
	return c
}

// Run runs function fn on inputs (by parameter name; int64 scalars are
// rank-0 int64 tensors) and returns its outputs by result name, allocated
// by Go. Runtime errors (bad inputs, checked arithmetic) are
// *ir.RuntimeError values with the fallback interpreter's texts. The
// context is checked before the call; a native call is not interruptible.
func (p *Program) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (*Result, error) {
	return p.run(ctx, fn, inputs, p.def)
}

// RunWith runs function fn as Run does, with the call settings co
// instead of the Program's own (Options.TileRows, Options.CallISA): one
// loaded program serves native and each of its bit-identical variants,
// call by call (isolate's workers run them so). A co.ISA the library
// cannot run is an error wrapping ErrISA; on the fallback path (Auto) co
// changes nothing.
func (p *Program) RunWith(ctx context.Context, fn string, inputs map[string]*tensor.Tensor, co CallOptions) (*Result, error) {
	opts, err := p.resolve(co)
	if err != nil {
		return nil, err
	}
	return p.run(ctx, fn, inputs, opts)
}

// run is Run with the call settings co.
func (p *Program) run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor, co callOpts) (*Result, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return nil, ErrClosed
	}
	c := p.funcOf(fn)
	if c == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFunc, fn)
	}
	if c.entry == nil {
		if p.mode == Forced || c.fallback == nil {
			return nil, c.reason
		}
		p.fallbackRuns.Add(1)
		out, err := c.fallback.Run(ctx, inputs)
		if err != nil {
			return nil, err
		}
		return &Result{Outputs: out, Path: executor.Fallback}, nil
	}
	res, err := p.runNative(ctx, c, inputs, nil, co)
	if err != nil {
		return nil, err
	}
	res.Path = p.path
	return res, nil
}

// RunInto runs function fn like Run but writes its results into outputs,
// the caller's tensors (by result name, each of the result's dtype and of
// the shape the inputs give it), and allocates nothing on the native path:
// a loop that scores batch after batch reuses its output tensors, as
// PyTorch's out= arguments do. A missing, unknown or mis-shaped output is
// an *ir.RuntimeError of kind ir.ErrShape; on any error the outputs'
// contents are unspecified. On the fallback path (Auto) the results are
// computed as by Run and copied in. It returns the path that ran.
func (p *Program) RunInto(ctx context.Context, fn string, inputs, outputs map[string]*tensor.Tensor) (Path, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return "", ErrClosed
	}
	c := p.funcOf(fn)
	if c == nil {
		return "", fmt.Errorf("%w: %s", ErrUnknownFunc, fn)
	}
	if outputs == nil {
		outputs = map[string]*tensor.Tensor{}
	}
	if c.entry != nil {
		_, err := p.runNative(ctx, c, inputs, outputs, p.def)
		return executor.Native, err
	}
	if p.mode == Forced || c.fallback == nil {
		return "", c.reason
	}
	p.fallbackRuns.Add(1)
	out, err := c.fallback.Run(ctx, inputs)
	if err != nil {
		return "", err
	}
	for name, t := range out {
		dst := outputs[name]
		if dst == nil || dst.DType != t.DType || !slices.Equal(dst.Shape, t.Shape) {
			return "", &ir.RuntimeError{Kind: ir.ErrShape, Func: fn,
				Detail: fmt.Sprintf("RunInto: output %s must be a %s tensor of shape %v", name, t.DType, t.Shape)}
		}
		copy(dst.F32, t.F32)
		copy(dst.I64, t.I64)
	}
	return executor.Fallback, nil
}

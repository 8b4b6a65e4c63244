// Package builtin is the registry of rxeq's executors: the one place that
// knows the built-in engines by name, builds them from one Config, and
// says which of them cannot run on this machine and why. The command, the
// runner's defaults, the fuzzer, the reducer, selftest and rxginkgo all
// get their executors from Select.
//
// # Adding an executor
//
// An engine is a package with a type that implements executor.Executor
// (and, where it applies, the optional interfaces of package executor:
// MemoryProfiler, CompilerUser, Prebuilder, Slotter, io.Closer). To make
// it a built-in one, give it a typed name in package executor and one
// line in registry below:
//
//	{executor.Torch, compiled(executor.Torch), availableTorch},
//
// where the second function builds it from a Config and the last one says
// why it cannot run here under that Config (nil when it can; a nil
// function means always). Nothing else in
// the tree changes: `rxeq run --executors`, `rxeq fuzz --executors`,
// the runner's defaults and rxginkgo's entries find it here.
package builtin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/pyexport"
)

// ErrUnknown is wrapped by Select's error for a name that is neither
// built in nor an external executor's.
var ErrUnknown = errors.New("unknown executor")

// Config is how the built-in executors run. The zero value is forced
// native code in this process, the compilers "cc" and "c++", the build
// cache in os.UserCacheDir()/rxeq, one torch thread and each engine's
// default timeouts; FromEnv fills the settings a user gives through the
// environment.
//
// Process-wide settings: TorchThreads is libtorch's thread count, one per
// process (the latest torch program prepared in a process sets it for
// all); the others are per executor.
type Config struct {
	// Mode is native's mode: native.Forced (the harness's: never falls
	// back) or native.Auto.
	Mode native.Mode
	// CompileTimeout bounds each C compiler run (0:
	// native.DefaultCompileTimeout).
	CompileTimeout time.Duration
	// TorchThreads is the torch executor's intra-op thread count (0: 1).
	TorchThreads int
	// Isolate runs native and torch code, and ONNX Runtime, in worker
	// processes (package isolate), so that a crash or a hang fails one
	// case.
	Isolate bool
	// IsolateORT runs the ONNX Runtime executors (onnxruntime and
	// onnxruntime-noopt) in worker processes even when Isolate is false,
	// so that a crash of ONNX Runtime fails one case rather than ending
	// the process; `rxeq run` sets it unless --isolate-ort=false.
	IsolateORT bool
	// CallTimeout bounds one call of an executor that runs in another
	// process: an isolated native or torch run, or an external executor's
	// prepare or run, which is then killed and restarted (0: each
	// engine's default, isolate.DefaultTimeout and
	// external.DefaultTimeout).
	CallTimeout time.Duration
	// StartTimeout bounds starting an external or generated-code
	// executor's process until its hello, a restart included (0:
	// external.Options' default, CallTimeout when that is shorter than
	// external.DefaultStartTimeout).
	StartTimeout time.Duration
	// CC and CXX are the C and C++ compilers ("": cc and c++). They may
	// carry arguments ("gcc -m64").
	CC, CXX string
	// ProgramCC compiles each program's own C ("": CC); the runtime's
	// float kernels are always built by CC (native.Options.ProgramCC).
	ProgramCC string
	// CacheDir is the build cache ("": os.UserCacheDir()/rxeq);
	// RuntimeCacheDir is where the runtime library is built ("":
	// CacheDir).
	CacheDir, RuntimeCacheDir string
	// ISA caps the native kernels' instruction set ("": the widest this
	// CPU supports; native.Options.ISA).
	ISA string
	// TorchRoot is a libtorch prefix to use instead of the usual places
	// ("": those; native.Options.TorchRoot).
	TorchRoot string
	// Worker is the argv of isolated workers (nil: this binary's
	// `rxeq worker`, isolate.Executor's default).
	Worker []string
	// ORTLib is the ONNX Runtime library of the onnxruntime and
	// onnxruntime-noopt executors ("": ort.DefaultLibrary(), where
	// ci/setup.sh puts it). Under Isolate they run in worker processes,
	// which load the library themselves.
	ORTLib string
	// Python is the interpreter of the generated-code executors pytorch,
	// torchscript and numpy ("": pyexport.DefaultPython, Debian's
	// /usr/bin/python3).
	Python string
	// Node is the node binary of the TensorFlow.js executors tfjs-cpu
	// and tfjs-wasm ("": jsexport.DefaultNode, node on PATH).
	Node string
	// TFJSDir is the directory whose node_modules hold the TensorFlow.js
	// packages ("": jsexport.DefaultDir(), where ci/setup.sh installs
	// them).
	TFJSDir string
	// Version is rxeq's version, written into generated modules' headers.
	Version string
}

// The environment variables FromEnv reads.
const (
	EnvCC           = "CC"
	EnvCXX          = "CXX"
	EnvCache        = "RXEQ_CACHE"
	EnvRuntimeCache = "RXEQ_RUNTIME_CACHE"
	EnvProgramCC    = "RXEQ_PROGRAM_CC"
	EnvISA          = "RXEQ_NATIVE_ISA"
	EnvTorchRoot    = "RXEQ_TORCH_ROOT"
	EnvORTLib       = "RXEQ_ORT_LIB"
	EnvPython       = "RXEQ_PYTHON"
	EnvNode         = "RXEQ_NODE"
	EnvTFJSDir      = "RXEQ_TFJS_DIR"
)

// FromEnv returns c with every compiler and cache setting it leaves empty
// read from the environment through getenv (os.Getenv): CC from $CC, CXX
// from $CXX, CacheDir from $RXEQ_CACHE, RuntimeCacheDir from
// $RXEQ_RUNTIME_CACHE, ProgramCC from $RXEQ_PROGRAM_CC, ISA from
// $RXEQ_NATIVE_ISA, TorchRoot from $RXEQ_TORCH_ROOT, ORTLib from
// $RXEQ_ORT_LIB, Python from $RXEQ_PYTHON, Node from $RXEQ_NODE and
// TFJSDir from $RXEQ_TFJS_DIR. It is the one
// place the executors' environment is read; the rxeq command and the
// runner's default executors (harness.Options with no Executors) apply it,
// and a library user calls it to honour the same variables.
func (c Config) FromEnv(getenv func(string) string) Config {
	fill := func(v *string, name string) {
		if *v == "" {
			*v = getenv(name)
		}
	}
	fill(&c.CC, EnvCC)
	fill(&c.CXX, EnvCXX)
	fill(&c.CacheDir, EnvCache)
	fill(&c.RuntimeCacheDir, EnvRuntimeCache)
	fill(&c.ProgramCC, EnvProgramCC)
	fill(&c.ISA, EnvISA)
	fill(&c.TorchRoot, EnvTorchRoot)
	fill(&c.ORTLib, EnvORTLib)
	fill(&c.Python, EnvPython)
	fill(&c.Node, EnvNode)
	fill(&c.TFJSDir, EnvTFJSDir)
	return c
}

// NativeOptions are the native.Options of runtime rt (executor.Native or
// executor.Torch) under c.
func (c Config) NativeOptions(rt executor.Name) native.Options {
	o := native.Options{CC: c.CC, CXX: c.CXX, CacheDir: c.CacheDir, RuntimeCacheDir: c.RuntimeCacheDir,
		ProgramCC: c.ProgramCC, Mode: c.Mode, CompileTimeout: c.CompileTimeout, ISA: c.ISA, TorchRoot: c.TorchRoot}
	if rt == executor.Torch {
		o.Runtime = executor.Torch
		o.TorchThreads = c.TorchThreads
	}
	return o
}

// entry is one built-in executor: its name, how to build it and whether
// it can run here.
type entry struct {
	name      executor.Name
	make      func(Config) executor.Executor
	available func(Config) error
}

// registry lists the built-in executors in report order.
func registry() []entry {
	return []entry{
		{executor.Oracle, func(Config) executor.Executor { return oracle.Executor{} }, nil},
		{executor.Fallback, func(Config) executor.Executor { return fallback.Executor{} }, nil},
		{executor.Native, compiled(executor.Native), func(Config) error { return native.Available() }},
		{executor.Torch, compiled(executor.Torch), availableTorch},
		{executor.ONNXRuntime, onnxRuntime(ort.Optimize), availableORT},
		{executor.ONNXRuntimeNoOpt, onnxRuntime(ort.NoOptimize), availableORT},
		{executor.PyTorch, generated(executor.PyTorch), availablePython(executor.PyTorch)},
		{executor.TorchScript, generated(executor.TorchScript), availablePython(executor.TorchScript)},
		{executor.NumPy, generated(executor.NumPy), availablePython(executor.NumPy)},
		{executor.TFJSCPU, tfjs(executor.TFJSCPU), availableTFJS(executor.TFJSCPU)},
		{executor.TFJSWasm, tfjs(executor.TFJSWasm), availableTFJS(executor.TFJSWasm)},
		{executor.NativeAVX2, nativeISA(executor.NativeAVX2, "avx2"), availableISA("avx2")},
		{executor.NativeSSE2, nativeISA(executor.NativeSSE2, "sse2"), availableISA("sse2")},
		{executor.NativeC, nativeISA(executor.NativeC, "c"), availableISA("c")},
		{executor.NativeTiled, nativeTiled, func(Config) error { return native.Available() }},
	}
}

// onnxRuntime builds an ONNX Runtime executor at optimization level l, in
// this process or in workers.
func onnxRuntime(l ort.Level) func(Config) executor.Executor {
	return func(c Config) executor.Executor {
		e := ort.Executor{Library: c.ORTLib, Level: l}
		if c.Isolate || c.IsolateORT {
			return isolate.Executor{ONNXRuntime: &e, Timeout: c.CallTimeout, Command: c.Worker}
		}
		return e
	}
}

// availableORT is why the ONNX Runtime executors cannot run: no cgo, no
// library at c.ORTLib (or where ci/setup.sh puts it), or a library that
// is not ONNX Runtime 1.30 (the text says how to install it).
func availableORT(c Config) error { return ort.Executor{Library: c.ORTLib}.Available() }

// generated builds a generated-code executor (pytorch, torchscript,
// numpy): the program exported as Python and run in a long-lived Python
// process over rxeq.executor/v1.
func generated(name executor.Name) func(Config) executor.Executor {
	return func(c Config) executor.Executor {
		e, err := pyexport.NewExecutor(name, pyexport.ExecutorOptions{Python: c.Python, Timeout: c.CallTimeout, StartTimeout: c.StartTimeout, Version: c.Version})
		if err != nil {
			panic(err) // the names are pyexport's own: a bug
		}
		return e
	}
}

// availablePython is why a generated-code executor cannot run: the
// interpreter (c.Python) is missing or lacks the framework.
func availablePython(name executor.Name) func(Config) error {
	return func(c Config) error { return pyexport.Available(name, c.Python) }
}

// tfjs builds a TensorFlow.js executor (tfjs-cpu, tfjs-wasm): the
// program exported as a CommonJS module and run in a long-lived node
// process over rxeq.executor/v1.
func tfjs(name executor.Name) func(Config) executor.Executor {
	return func(c Config) executor.Executor {
		e, err := jsexport.NewExecutor(name, c.tfjsOptions())
		if err != nil {
			panic(err) // the names are jsexport's own: a bug
		}
		return e
	}
}

func (c Config) tfjsOptions() jsexport.ExecutorOptions {
	return jsexport.ExecutorOptions{Node: c.Node, Dir: c.TFJSDir, Timeout: c.CallTimeout, StartTimeout: c.StartTimeout, Version: c.Version}
}

// availableTFJS is why a TensorFlow.js executor cannot run: no node, or
// the packages are not installed in c.TFJSDir (the text says how).
func availableTFJS(name executor.Name) func(Config) error {
	return func(c Config) error { return jsexport.Available(name, c.tfjsOptions()) }
}

// compiled builds the native or torch executor, in process or in workers.
func compiled(rt executor.Name) func(Config) executor.Executor {
	return func(c Config) executor.Executor { return c.compiled(c.NativeOptions(rt), "") }
}

// compiled builds the executor of opts named variant ("": native or
// torch), in process or in workers.
func (c Config) compiled(opts native.Options, variant executor.Name) executor.Executor {
	if c.Isolate {
		return isolate.Executor{Options: opts, Timeout: c.CallTimeout, Command: c.Worker, Variant: variant}
	}
	return native.Executor{Options: opts, Variant: variant}
}

// TiledRows is the tile of the native-tiled executor: every batch above
// 64 rows of a row-separable function runs in tiles of 64 rows (the
// last one ragged), the smallest tile the native runtime takes.
const TiledRows = 64

// ErrISA is wrapped by the reason a native-ISA variant cannot run: the
// CPU lacks that instruction set, or $RXEQ_NATIVE_ISA caps native below
// it.
var ErrISA = errors.New("instruction set not available")

// nativeISA builds native with every call's kernels at isa, named name:
// a variant that must give native's bits (executor.Twin). It runs
// native's library (native.Options.CallISA changes no build), so in a
// fuzz campaign it shares native's worker (isolate.Executor.ShareSlot).
func nativeISA(name executor.Name, isa string) func(Config) executor.Executor {
	return func(c Config) executor.Executor {
		opts := c.NativeOptions(executor.Native)
		opts.CallISA = isa
		return c.compiled(opts, name)
	}
}

// nativeTiled builds native-tiled: native with TiledRows rows per tile.
func nativeTiled(c Config) executor.Executor {
	opts := c.NativeOptions(executor.Native)
	opts.TileRows = TiledRows
	return c.compiled(opts, executor.NativeTiled)
}

// availableISA is why native's kernels cannot run at isa here: no cgo,
// a CPU without that instruction set, or a cap ($RXEQ_NATIVE_ISA,
// Config.ISA) below it, which would make the variant run native's own
// kernels and test nothing of its own.
func availableISA(isa string) func(Config) error {
	return func(c Config) error {
		if err := native.Available(); err != nil {
			return err
		}
		want := slices.Index(runtime.ISAs, isa)
		widest, err := runtime.DetectISA("")
		if err != nil {
			return err
		}
		if slices.Index(runtime.ISAs, widest) < want {
			return fmt.Errorf("%w: this CPU runs the native kernels at %s at most, not %s", ErrISA, widest, isa)
		}
		if capped, err := runtime.DetectISA(c.ISA); err != nil {
			return err
		} else if slices.Index(runtime.ISAs, capped) < want {
			return fmt.Errorf("%w: $%s caps the native kernels at %s, below %s", ErrISA, EnvISA, capped, isa)
		}
		return nil
	}
}

// availableTorch is why torch cannot run: no cgo, or no libtorch under
// c.TorchRoot or the usual places (the text names Debian's
// libtorch-dev).
func availableTorch(c Config) error {
	if err := native.Available(); err != nil {
		return err
	}
	_, err := runtime.FindTorch(c.TorchRoot)
	return err
}

// Reference returns the executor every other one is compared with: the
// float64 oracle.
func Reference() executor.Executor { return oracle.Executor{} }

// Names returns the built-in executors' names in report order.
func Names() []executor.Name {
	var out []executor.Name
	for _, e := range registry() {
		out = append(out, e.name)
	}
	return out
}

// DefaultNames are the executors compared with the oracle when none are
// named: fallback, native and torch.
func DefaultNames() []executor.Name {
	return []executor.Name{executor.Fallback, executor.Native, executor.Torch}
}

// IsBuiltin reports whether name is a built-in executor's.
func IsBuiltin(name executor.Name) bool { return slices.Contains(Names(), name) }

// Available reports whether the built-in executor name can run here under
// c: nil, or why not (an error wrapping native.ErrUnavailable in a build
// without cgo, native.ErrNoTorch without libtorch, ErrUnknown for a name
// that is not built in).
func (c Config) Available(name executor.Name) error {
	for _, e := range registry() {
		if e.name == name {
			if e.available == nil {
				return nil
			}
			return e.available(c)
		}
	}
	return fmt.Errorf("%w %q", ErrUnknown, name)
}

// Selection is what Select chose.
type Selection struct {
	// Reference is the executor the others are compared with: the oracle.
	Reference executor.Executor
	// Executors are the others, in the order named (the built-in ones
	// first, then the external ones, when none were named).
	Executors []executor.Executor
	// Unavailable are the named (or default) built-in executors this
	// machine cannot run, with the reason; they are not in Executors.
	Unavailable []executor.Unavailable
}

// Close closes the executors that hold processes (external ones).
func (s Selection) Close() { executor.CloseAll(s.Executors) }

// Select builds the executors named, under cfg. names nil means
// DefaultNames and then every external executor of externals; otherwise
// exactly the executors named, in that order, each a built-in name or the
// Name of one of externals (which are built only when named). The oracle
// may be named: it is the Reference either way, never in Executors.
//
// A built-in executor that cannot run here is left out and listed in
// Unavailable with the reason; callers decide whether that is an error
// (rxeq fuzz --executors torch without libtorch) or a report line (the
// default set). A name that is unknown or given twice is an error
// (wrapping ErrUnknown for the former); so is an external executor whose
// name is a built-in one. Close the Selection's executors when done.
func Select(names []executor.Name, cfg Config, externals []external.Options) (Selection, error) {
	sel := Selection{Reference: Reference()}
	for _, o := range externals {
		if IsBuiltin(executor.Name(o.Name)) {
			return Selection{}, fmt.Errorf("executor name %q is taken by a built-in executor; choose another", o.Name)
		}
	}
	if names == nil {
		names = DefaultNames()
		for _, o := range externals {
			names = append(names, executor.Name(o.Name))
		}
	}
	seen := map[executor.Name]bool{}
	for _, name := range names {
		if seen[name] {
			sel.Close()
			return Selection{}, fmt.Errorf("executor %q listed twice", name)
		}
		seen[name] = true
		e, err := sel.add(name, cfg, externals)
		if err != nil {
			sel.Close()
			return Selection{}, err
		}
		if e != nil {
			sel.Executors = append(sel.Executors, e)
		}
	}
	return sel, nil
}

// add builds one named executor (nil for the oracle or an unavailable
// one, which it records).
func (s *Selection) add(name executor.Name, cfg Config, externals []external.Options) (executor.Executor, error) {
	if name == executor.Oracle {
		return nil, nil
	}
	for _, e := range registry() {
		if e.name != name {
			continue
		}
		if e.available != nil {
			if err := e.available(cfg); err != nil {
				s.Unavailable = append(s.Unavailable, executor.Unavailable{Executor: name, Reason: err.Error()})
				return nil, nil
			}
		}
		return e.make(cfg), nil
	}
	i := slices.IndexFunc(externals, func(o external.Options) bool { return executor.Name(o.Name) == name })
	if i < 0 {
		var builtins []string
		for _, n := range Names() {
			builtins = append(builtins, string(n))
		}
		return nil, fmt.Errorf("%w %q (want %s, or a name defined with --executor)", ErrUnknown, name, strings.Join(builtins, ", "))
	}
	o := externals[i]
	if o.Timeout == 0 {
		o.Timeout = cfg.CallTimeout
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = cfg.StartTimeout
	}
	return external.New(o)
}

// ParseNames splits a comma-separated list of executor names ("oracle,
// fallback,native"), dropping blanks; "" gives nil (the defaults).
func ParseNames(list string) []executor.Name {
	var out []executor.Name
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, executor.Name(f))
		}
	}
	return out
}

// Available is Config{}.Available: whether the built-in executor name can
// run here with libtorch looked for in the usual places.
func Available(name executor.Name) error { return Config{}.Available(name) }

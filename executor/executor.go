package executor

import (
	"context"
	"regexp"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Name identifies an executor in options, results and reports. The
// built-in ones are the constants below; an external executor's name is
// the user's (ValidName).
type Name string

// The built-in executors' names. They are also the Path of what ran
// (Outcome.Path): native in auto mode may report Fallback for a function
// it routed to the interpreter.
const (
	// Oracle is the float64 reference (package oracle).
	Oracle Name = "oracle"
	// Fallback is the float32 interpreter of the lowered IR (package
	// fallback).
	Fallback Name = "fallback"
	// Native is the IR compiled to C over rxeq's own kernels (package
	// native), in process or in a worker process (package isolate).
	Native Name = "native"
	// Torch is the same generated C over libtorch's ATen kernels.
	Torch Name = "torch"
	// ONNXRuntime is the program exported to ONNX and run by ONNX Runtime
	// with all graph optimizations (its default).
	ONNXRuntime Name = "onnxruntime"
	// ONNXRuntimeNoOpt is the same model run by ONNX Runtime with its
	// graph optimizer disabled (ORT_DISABLE_ALL).
	ONNXRuntimeNoOpt Name = "onnxruntime-noopt"
	// PyTorch is the program exported as a Python module and run by
	// PyTorch eagerly.
	PyTorch Name = "pytorch"
	// TorchScript is the same module's functions compiled with
	// torch.jit.script.
	TorchScript Name = "torchscript"
	// NumPy is the program exported as a NumPy module.
	NumPy Name = "numpy"
	// TFJSCPU is the program exported as a TensorFlow.js module and run
	// by TF.js's cpu backend (kernels in JavaScript) under node.
	TFJSCPU Name = "tfjs-cpu"
	// TFJSWasm is the same module run by TF.js's wasm backend (XNNPACK
	// compiled to WebAssembly) on one thread.
	TFJSWasm Name = "tfjs-wasm"
	// NativeAVX2, NativeSSE2 and NativeC are native with its kernels'
	// instruction set capped at AVX2, SSE2 and plain C: variants of
	// Native that must give its bits exactly (see Twin).
	NativeAVX2 Name = "native-avx2"
	NativeSSE2 Name = "native-sse2"
	NativeC    Name = "native-c"
	// NativeTiled is native running every batch above 64 rows of a
	// row-separable function in tiles of 64 rows: a variant of Native that
	// must give its bits exactly (see Twin).
	NativeTiled Name = "native-tiled"
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
// another framework fits without changes to the runner: it translates the
// IR (or the tree) in Prepare, feeds the inputs by parameter name in Run
// and returns the outputs by result name with its own Path. Its float
// outputs are compared with the oracle like everyone else's.
//
// An executor may implement the optional interfaces of capability.go
// (MemoryProfiler, Prebuilder, CompilerUser, Slotter, io.Closer); the
// runner and the fuzzer ask for them with type assertions, never by name.
type Executor interface {
	// Name identifies the executor in results and options.
	Name() Name
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
//
// A Prepared that runs in a process it may have to start again (after a
// crash or a timeout) implements Readier, so that the runner restarts it
// before a case's clock starts and not on that case's time.
type Prepared interface {
	Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (Outcome, error)
	Close() error
}

// Outcome is what one Run produced.
type Outcome struct {
	Outputs map[string]*tensor.Tensor // by result name
	// Path names what actually ran: Oracle, Fallback, Native, Torch (or a
	// user executor's own name). An executor that can route a function
	// elsewhere (native in auto mode) says so here.
	Path Name
}

// Unavailable is an executor that was asked for, or is in the default
// set, but cannot run on this machine, and why (torch without libtorch;
// native and torch in a build without cgo). Callers report it: never a
// silent pass.
type Unavailable struct {
	Executor Name
	Reason   string
}

// namePattern is what ValidName accepts.
var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name can name an executor: a letter, then up
// to 63 letters, digits, '_', '.' or '-'.
func ValidName(name string) bool { return namePattern.MatchString(name) }

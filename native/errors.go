package native

import (
	"errors"

	"github.com/rextio/rxeq/native/build"
	"github.com/rextio/rxeq/native/cgen"
)

// Error kinds of the native backend. Errors returned by this package wrap
// one of them (errors.Is); runtime errors of a call are *ir.RuntimeError
// values with the same texts as the fallback interpreter's.
var (
	// ErrUnsupported: the program uses an op, dtype or rank the native
	// backend does not compile. The message names the function and what.
	// It is cgen.ErrUnsupported, the code generator's.
	ErrUnsupported = cgen.ErrUnsupported
	// ErrCompiler: the C compiler is missing or failed. The message names
	// CC, and for a failed compile carries its stderr and the path of the
	// generated file. It is build.ErrCompiler.
	ErrCompiler = build.ErrCompiler
	// ErrCache: the build cache cannot be used (unsafe permissions, not
	// owned by the current user, unwritable). It is build.ErrCache.
	ErrCache = build.ErrCache
	// ErrLoad: the compiled library could not be loaded or lacks a function.
	ErrLoad = errors.New("loading native code")
	// ErrTooLarge: a function is too large to hand to the C compiler
	// (more than MaxFuncInstrs instructions). It also wraps
	// ErrUnsupported, so Auto mode runs such a function on the fallback.
	// It is cgen.ErrTooLarge.
	ErrTooLarge = cgen.ErrTooLarge
	// ErrUnknownFunc: Run was asked for a function the program lacks.
	ErrUnknownFunc = errors.New("no such function")
	// ErrClosed: the program was closed.
	ErrClosed = errors.New("native program is closed")
	// ErrInternal: the generated code reported an internal inconsistency (a
	// bug in rxeq, never in the program) or ran out of memory.
	ErrInternal = errors.New("native backend internal error")
	// ErrKernel: a framework kernel of the torch runtime threw (the C++
	// exception was caught at the runtime's C boundary and became the op's
	// status). The message names the function and the op.
	ErrKernel = errors.New("framework kernel failed")
	// ErrISA: a call asked for kernels of an instruction set the loaded
	// runtime library cannot run (Options.CallISA, CallOptions.ISA above
	// the library's widest, or on the torch runtime), or its kernels ran
	// at another one than it asked for.
	ErrISA = errors.New("instruction set not in force")
)

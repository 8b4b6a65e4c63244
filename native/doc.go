// Package native is rxeq's forced-native backend: it compiles the lowered
// IR (program/ir) to one C translation unit, builds it with the system C
// compiler into a content-addressed cache, loads it with dlopen and calls
// it through cgo, without copying tensors.
//
// # Use
//
//	prog, err := native.Compile(ctx, irProgram, native.Options{})
//	defer prog.Close()
//	res, err := prog.Run(ctx, "score_linear", inputs) // res.Outputs, res.Path
//
// Generate returns the C source alone (deterministic: the same program gives
// the same bytes); CFuncName gives the C name of a scoring function's
// generated function, so a source lock can find its body. Both forward to
// package native/cgen, the code generator. The forms of the generated C
// that locks rely on are documented on the generator (native/cgen's gen.go);
// the loop of `for round_idx := range 4` is exactly
// `for (int64_t round_idx = 0; round_idx < 4; round_idx++) {`.
//
// # Layout
//
// Three packages, with dependencies pointing one way:
//
//   - native/cgen generates C from the IR (Generate, Translate, Mangle,
//     CFuncName, the support check and the C macro table) and describes
//     each generated function's calling convention (cgen.FuncABI);
//   - native/build resolves the compilers and builds the runtime
//     libraries and program libraries into the content-addressed cache;
//     it uses neither cgo nor cgen;
//   - native (this package) loads the libraries and calls them through
//     cgo: Compile, CompileBatch, Program, Run, RunInto and the executor,
//     on top of both. Generate, CFuncName, Mangle, MaxFuncInstrs,
//     DefaultCompileTimeout, GeneratedFile, Flags, ScratchDir,
//     DefaultCacheDir and the error kinds are forwarded from them, so that
//     callers need only this package.
//
// This package still joins two jobs in a few places, on purpose: Compile
// and CompileBatch (program.go, batch.go) turn Options into a
// build.Toolchain and a build, then load it, because Auto mode decides
// per build and per load what falls back; and the torch runtime's setup
// (torch_build.go) builds through package build but must configure the
// library once loaded (threads, RTLD_NODELETE), which needs cgo. The row
// plan of a function (tile.go) is derived here from cgen.FuncABI, not in
// cgen, because only the call side tiles.
//
// # Modes
//
// Forced (the default, the harness's): an op, dtype or rank the backend
// does not compile is an error wrapping ErrUnsupported that names it, and so
// is a missing compiler or a failed build; nothing runs elsewhere. Auto:
// functions the backend cannot compile, or all of them when the library
// cannot be built or loaded, run on the fallback interpreter; Result.Path
// says which ran and Program.PathOf / NativeError say why.
//
// Supported: float32 and int64 values of rank 0 to 4 (bool only as a local
// condition), at most 16 symbolic dimensions per function, every op of the
// IR.
//
// # Build and cache
//
// The compiler is $CC (Options.CC, else $CC, else "cc"; it may carry
// arguments), run with -std=c11 -O2 -fPIC -shared -ffp-contract=off -Wall
// -Werror, -iquote . (so no file beside the sources can shadow a system
// header) and -lm. The runtime library (native/runtime) is built once per
// cache into rt-KEY.so, with SLEEF (-lsleef) when the compiler finds
// libsleef.so, and every program is linked against it; its key covers its
// sources, their build arguments (the ISA cap) and libraries.
// Options.ProgramCC ($RXEQ_PROGRAM_CC) may name another compiler for the
// program's own translation unit, which holds no float arithmetic (tcc
// builds one in milliseconds, with -I. for -iquote .; `rxeq fuzz` uses it
// for its candidates); Options.RuntimeCacheDir ($RXEQ_RUNTIME_CACHE)
// another directory for the runtime library. A compiler's `--version`
// answer is remembered in the cache (cc-HASH.id, keyed by the binary's
// path, arguments, inode, size and mtime). The cache directory is
// Options.CacheDir, else
// $RXEQ_CACHE, else os.UserCacheDir()/rxeq, created with mode 0700; a
// directory that is not owned by the current user or that group or others
// can write is refused (ErrCache).
//
// The runtime (native/runtime: rx_runtime.h, rx_context.c, rx_kernels.c) is
// a library of its own, built once per (its sources, compiler, flags) as
// rt-KEY.so, and linked with -Wl,-Bsymbolic. A program's translation unit
// includes rx_runtime.h only and is linked against that library by its
// absolute path, so it holds nothing but its own functions (about 0.1 s of
// compile for the catalog's reference.rx, where compiling the runtime into
// each program took 0.3 to 0.5 s). A program's entry is keyed by the
// SHA-256 of the generated source, the header, the runtime library's key,
// the compiler's path, arguments and `--version` output, and the flags. It
// holds KEY.so, KEY.sum (the object's SHA-256, checked before every load,
// so a truncated or corrupt object is rebuilt rather than loaded) and
// src-KEY/ (the generated rx_gen.c and the header, kept so that compile
// errors can name the file). Entries are opened without following links
// and without blocking, and must be private regular files: a FIFO, link or
// device planted in their place is rebuilt over, never read. Every file
// appears through a rename; builders of the same key serialise on KEY.lock
// (flock), so concurrent processes and goroutines all succeed and compile
// once; temporaries that a killed build left are swept after an hour. A
// compile failure (ErrCompiler) carries the compiler's stderr and the
// generated file's path; a missing compiler names CC.
//
// Each compiler run has a deadline (Options.CompileTimeout, default
// DefaultCompileTimeout) and runs in a process group of its own that is
// killed as a whole on timeout or cancellation; on Linux the driver also
// dies with rxeq. A function of more than MaxFuncInstrs IR instructions is
// refused before the compiler runs (ErrTooLarge): gcc's time grows faster
// than linearly with the size of one C function.
//
// # Calls
//
// Run checks only what C cannot see (missing and unknown inputs, with
// ir.BindInputs's texts) and allocates the outputs from the checked output
// shapes; the generated prologue validates every input once (dtype, rank,
// dims binding symbols, device cpu:0, non-null data, and that the Go slice
// holds as many elements as the shape says), in ir.BindInputs's order. Input
// and output data stay in Go memory, pinned with runtime.Pinner for the call
// and described by an rx_arg array that holds only pinned pointers, so the
// cgo pointer rules hold under the default cgocheck. Runtime errors come
// back from C as codes and operands and are formatted in Go with
// ir.BoundaryError and ir.CheckedError, so their texts are the fallback's.
// The call is not interruptible; the context is checked before it. The
// library stays loaded until Close; a Program is safe for concurrent use.
//
// A large batch of a row-separable function runs in tiles of rows
// (Options.TileRows, tile.go) inside its one call: the prologue validates
// the whole batch's inputs once, then the generated body runs once per
// tile (rx_tile) over sub-views of the same Go memory, with the bits of
// one pass; an invalid call fails before any tile, with the text of an
// untiled one.
//
// # Invocation context
//
// Each call opens one context (rx_open) and closes it (rx_close); see
// native/runtime. Intermediates live in the call's arena, at most two
// buffers per value, reused across loop iterations and all released on
// close. The arena's memory is lent to the call by a per-Program pool (one
// arena per concurrent call, at most GOMAXPROCS kept, freed by Close): a
// call carves its buffers out of one block, and a call that outgrows the
// block mallocs the rest and leaves a bigger block for the next one, so a
// steady stream of calls allocates and faults in no memory. The pool is
// process memory, not a cache: no value survives a call (every buffer is
// written by its op before it is read). A copy out of a temporary that is
// written just before and read by nothing else (`logits = Tanh(logits)`) is
// a move: the variable takes over the temporary's buffer and the
// temporary the variable's old one, so nothing is copied and no buffer is
// shared. A result whose final value sits in the arena is copied to its Go
// output buffer once, at close; results written by an op go there
// directly. Every op result (a move's too) is validated against its checked
// type before its facts are stamped trusted; kernels read stamped facts and
// never re-derive them. The counters of every call are summed in Counters;
// ArenaAllocs counts buffers handed to values, not blocks.
//
// A call's Go side reuses a pooled frame (the rx_arg array and the status,
// in C memory) and sizes the outputs without maps. The first 12 tensors'
// data pointers reach C as arguments of the call typed float* (memory
// without Go pointers, which cgo neither pins nor scans) and are written
// into the rx_arg array only for the call; further tensors are pinned. A
// call allocates the map, one block for the Result, the output tensors
// and their shapes, and one block for all the outputs' data (so an output
// keeps its siblings' data alive as long as it lives).
//
// # Runtimes: native and torch
//
// The generated C calls only the runtime's C API (rx_runtime.h), and
// Options.Runtime chooses the library behind it: executor.Native (rxeq's own
// float32 kernels, rx_kernels.c) or executor.Torch (rx_aten.cc, every float
// kernel one ATen `_out` op over at::from_blob views of the call's own
// memory). The translation unit is byte-identical for both, so every
// //rx:lock holds for both, and both share rx_context.c: the invocation
// context, boundary validation, moves and the integer scalar ops, so
// control flow and integer arithmetic never reach ATen. Result.Path and
// PathOf name the runtime ("native" or "torch"); Counters.KernelCalls
// counts ATen calls (0 for native).
//
// The torch runtime needs libtorch (Debian's libtorch-dev: headers in
// /usr/include, libtorch.so, libtorch_cpu.so and libc10.so; see
// runtime.FindTorch, $RXEQ_TORCH_ROOT for another prefix) and a C++17
// compiler (Options.CXX, else $CXX, else c++). Without libtorch Compile
// fails with an error wrapping ErrNoTorch that names the package. The
// runtime is built once into the cache as rt-KEY.so: rx_context.c with the
// C flags above, rx_aten.cc with `c++ -std=c++17 -O2 -fPIC
// -ffp-contract=off -Wall -Werror`, linked -shared against -ltorch
// -ltorch_cpu -lc10; its key covers the sources, both compilers' identity
// and flags, the link flags and libtorch's version (runtime.Lib.Version).
// It is loaded once per process and never unloaded (RTLD_NODELETE:
// libtorch cannot be unloaded safely). Options.TorchThreads (default 1)
// sets ATen's intra-op threads and OpenBLAS's for every torch program of
// the process; the inter-op pool is set to one thread once per process.
// Every C++ exception is caught at the runtime's extern "C" boundary: an
// ATen failure is the op's status, an error wrapping ErrKernel that names
// the function and the op (ErrInternal for an allocation failure).
//
// Where ATen's kernels differ from rxeq's own (pinned by the torch specs):
// Maximum and Minimum of two zeros of different sign return their first
// operand, Max along an axis the first zero it meets, and Relu(-0) is -0
// (rxeq's kernels order the zeros as Go's math.Max and math.Min and give
// Relu(-0) = +0). The values compare equal, but 1/x turns them into
// opposite infinities, which the comparison matches exactly: a program
// dividing by Maximum(-0, +0), Minimum(+0, -0) or Relu(-0) fails on torch
// against the oracle. rxeq keeps ATen's behaviour (the torch executor
// shows what the framework computes) and pins it in the torch specs. MatMul (OpenBLAS sgemm) and Sum/Mean (ATen's cascade sum) add in
// another order than index order, and ATen's vectorised transcendental
// functions (SLEEF) were not built with -ffp-contract=off; the tolerance
// absorbs both. Argmax (first maximum, first NaN), NaN propagation in
// Maximum, Minimum, Max and Relu, stable Softmax and Mean = Sum/n are the
// same.
//
// # Numerics
//
// float32 throughout, as the fallback: Tanh, Exp, Log and Sigmoid
// (1/(1+exp(-x))), and the exps and log of Softmax and LogSoftmax, are
// evaluated in float64 (SLEEF's vectorised functions, or libm's without
// SLEEF) and rounded once, the fallback's method (on AVX-512 Tanh, Exp
// and Sigmoid take a short float64 path with a rounding test first, which
// gives the same bits: see rx_kernels.c); native/ulp_test.go measures
// every elementwise op against Go's math on each ISA, and with
// RXEQ_ULP_EXHAUSTIVE=1 compares every ISA's transcendentals bit for bit
// on all 2^32 inputs. Sqrt is
// correctly rounded; Relu keeps NaN; Maximum, Minimum and Max
// propagate NaN; MatMul, Sum and Softmax accumulate in increasing index
// order; Softmax and LogSoftmax subtract the row maximum; Argmax returns the
// first maximum and the first NaN.
//
// # Kernels and ISA
//
// The runtime's kernels (native/runtime/csrc/rx_kernels.c) find their
// widest ISA once per process when the library loads: AVX-512, AVX2, SSE2
// or plain C, the widest the CPU supports up to the cap that Go derives
// from golang.org/x/sys/cpu and $RXEQ_NATIVE_ISA (c, sse2, avx2, avx512;
// Options.ISA), which is part of the runtime's cache key. A call runs at
// that ISA or at a narrower one it asks for (Options.CallISA,
// CallOptions.ISA with RunWith: no other build), and the runtime reports
// the one it ran (Result.ISA; otherwise ErrISA). Every ISA gives the same
// bits.
// MatMul is register-blocked, each element summed in increasing k order
// with separate multiplies and adds. Codegen fuses a Transpose feeding a
// MatMul, a bias-row Add after one and a Tanh of that sum into
// rx_matmul_bt, rx_matmul_bias, rx_matmul_bt_bias and their _tanh forms
// (see native/cgen's gen.go), a pair of Add/Sub/Mul/Div through a temporary into rx_ew2
// and one of them with a float constant into rx_ew_const, with the bits of
// the ops one by one.
// SLEEF (libsleef) is linked when the
// compiler finds libsleef.so; without it the transcendentals use libm one
// element at a time.
package native

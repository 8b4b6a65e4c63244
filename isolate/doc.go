// Package isolate runs the native backend in a worker subprocess, so that
// a segfault, an abort or a hang in generated code becomes the failure of
// one case instead of the end of the run.
//
// It runs ONNX Runtime the same way (Executor.ONNXRuntime): the worker
// loads the library, receives the IR, and exports and runs the models,
// creating each function's session at its first call, so that a crash of
// ONNX Runtime while it optimizes a graph fails that call too. What
// follows says "native"; for ONNX Runtime read its executor's name
// ("onnxruntime crashed: signal SIGSEGV").
//
// Executor implements executor.Executor under the name "native": reports
// and comparisons read exactly as with native.Executor. Prepare
// starts a worker process (by default the running binary with the
// argument "worker", which is `rxeq worker`), sends it the lowered IR and
// the native.Options, and the worker generates, builds (through the usual
// cache) and loads the C. Run sends one function's inputs and reads its
// outputs back.
//
// When the worker dies during a call, Run returns an error wrapping
// ErrCrashed ("native crashed: signal SIGSEGV", "native crashed: exit
// status 3", followed by the tail of the worker's stderr); when a call
// outlives Executor.Timeout, the worker's process group is killed and Run
// returns an error wrapping ErrTimedOut ("native timed out after 30s").
// Both are *executor.ProcessError values (errors.As) naming the executor
// whose code ran ("torch crashed: …" for the torch runtime); the worker
// processes are supervised by internal/subproc, as external executors are.
// Either way the next Run starts a fresh worker and re-sends the program,
// so the rest of the run continues. A cancelled ctx kills the worker too,
// and Run returns an error wrapping ctx.Err().
//
// Runtime errors of the program cross the pipe as kind names and texts and
// are rebuilt as *ir.RuntimeError values with the same Kind sentinel and
// the same text, so compare.Errors compares them with the oracle's
// as before. Other errors keep their text and, where they wrapped one of
// the native.Err* or ir.Err* sentinels, that sentinel (errors.Is).
//
// The protocol is encoding/gob over the worker's stdin and stdout: a hello
// from the worker (protocol version), then request/response pairs. The IR
// travels in a pointer-free form (values by ID) and tensors as raw
// little-endian bytes, so every bit, NaN payloads included, arrives as
// sent. The worker moves its own stdout to stderr before serving (see
// ServeStdio), so nothing generated code or a library prints can corrupt
// the protocol; stderr is kept by the parent as a tail for crash reports.
//
// Calls on one Prepared are serialised (one worker, one call at a time);
// the harness's concurrency then only overlaps the other executors. A call
// whose ctx ends while it still waits for the worker (behind a hanging
// call, say) never ran: Run returns an error wrapping executor.ErrNotRun
// that names the call holding the worker ("not run: the native worker was
// busy with s/f/b4/native (running for 30s) until this case's deadline"),
// and the harness reports that case as not run rather than as a timeout.
// The worker is restarted by the next call that gets it; under the
// harness that is the next case's Ready (executor.Readier), before its
// clock starts, so the restart and preparing the program again are not
// counted against that case's timeout. A timeout of the worker
// (ErrTimedOut, which wraps executor.ErrTimedOut) is a timeout of the
// case to the harness (harness.ErrTimeout), as in process.
//
// An Executor with a Pool (for the fuzzer and the reducer, which prepare
// thousands of small programs) keeps one worker alive across programs
// instead: the worker holds any number of programs, Executor.Prebuild
// builds several with one compiler run (native.CompileBatch), and a crash
// or a timeout is still attributed as with a worker per program (see
// Pool). This is Linux/Unix-only code (process groups, dup2).
package isolate

package isolate

import "errors"

// Error kinds of isolated execution.
var (
	// ErrCrashed: the worker process died during a call (a signal such as
	// SIGSEGV or SIGABRT, or an unexpected exit). The text reads
	// "native crashed: signal SIGSEGV" or "native crashed: exit status N".
	ErrCrashed = errors.New("native crashed")
	// ErrTimedOut: a call outlived Executor.Timeout; the worker was killed.
	// The text reads "native timed out after 30s".
	ErrTimedOut = errors.New("native timed out")
	// ErrWorker: the worker could not be started or spoke the protocol
	// wrongly (wrong binary, version mismatch, undecodable message).
	ErrWorker = errors.New("native worker")
)

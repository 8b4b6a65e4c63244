package executor

import "errors"

// The error kinds every executor shares. An executor's error wraps one of
// them (or is an *ir.RuntimeError of the program); callers match them
// with errors.Is, never by their text.
var (
	// ErrExecutor: an executor was misused or misbehaved (an unknown
	// function, a panic, a nil program, a closed executor).
	ErrExecutor = errors.New("executor error")
	// ErrNotRun: an executor did not start a case at all, for example
	// because the process it runs cases in was busy with another case
	// until this one's deadline. Its text then starts "not run: " and
	// says why; the runner reports the case as not run, not as a timeout.
	ErrNotRun = errors.New("not run")
	// ErrUnserved: the executor does not serve this function (an
	// external executor did not list it). The runner reports the case as
	// skipped, with the reason.
	ErrUnserved = errors.New("function not served")
	// ErrStart: the process an executor runs in could not be started, or
	// did not greet rxeq as its protocol requires.
	ErrStart = errors.New("did not start")
	// ErrCrashed: the process an executor runs in died during a call (a
	// signal such as SIGSEGV or SIGABRT, or an unexpected exit). The
	// error is also a *ProcessError that says how.
	ErrCrashed = errors.New("crashed")
	// ErrTimedOut: a call outlived the executor's own timeout; its
	// process was killed. The error is also a *ProcessError.
	ErrTimedOut = errors.New("timed out")
	// ErrOptions: the options of a run are unusable: a malformed
	// executor spec, an unknown executor name, two executors with one
	// name, a bad shard. (harness.ErrOptions is this error.)
	ErrOptions = errors.New("bad runner options")
	// ErrProtocol: the process broke its protocol: bytes that are not a
	// message (something printed to stdout), a malformed or unexpected
	// message. The process is killed.
	ErrProtocol = errors.New("protocol violation")
)

package executor

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

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
	// ErrRejected: rxeq rejected an executor's answer: outputs that are
	// not the function's (missing, extra, a wrong dtype or shape) or an
	// input it wrote into. The case fails with that reason, never as if
	// the program had failed with an error of its own.
	ErrRejected = errors.New("answer rejected")
	// ErrByName: the executor runs code of its own chosen by function
	// name (a user's fixed scorer behind an external executor whose hello
	// lists the functions it serves), not the program it is given. It can
	// be compared on the .rx file that describes that code (rxeq run,
	// rxginkgo), but not on programs rxeq makes up or shrinks (rxeq fuzz,
	// rxeq reduce), which refuse it with an error wrapping this one.
	ErrByName = errors.New("serves its own functions by name")
)

// ProcessError is the error of a call whose process failed it: the
// process crashed (Kind wraps ErrCrashed), outlived the executor's
// timeout (ErrTimedOut) or broke its protocol (ErrProtocol), and it was
// killed. Match the kind with errors.Is and read the details with
// errors.As:
//
//	var pe *executor.ProcessError
//	if errors.As(err, &pe) && errors.Is(err, executor.ErrCrashed) { … pe.Signal … }
//
// Its text names the executor by construction. For a built-in executor
// (External false) it reads "native crashed: signal SIGSEGV", "torch
// crashed: exit status 3", "native timed out after 30s" or "native worker:
// bad message from the worker: DETAIL"; for an external executor
// "external executor crashed: NAME, while waiting for WHAT: signal
// SIGSEGV", "external executor timed out: NAME gave no answer within 1m0s
// while waiting for WHAT (killed)" or "executor protocol violation: NAME,
// while waiting for WHAT: DETAIL". The tail of the process's stderr, when
// it wrote any, follows on the next lines ("\nworker stderr (tail):\n…",
// "\nexecutor stderr (tail):\n…"); the first line is the failure alone.
type ProcessError struct {
	// Executor is the executor whose code the process ran: "native",
	// "torch", or an external executor's name.
	Executor Name
	// Kind is ErrCrashed, ErrTimedOut or ErrProtocol, or an engine's
	// error that wraps one of them (isolate.ErrCrashed, external.ErrProtocol,
	// …); Unwrap returns it, so errors.Is matches both.
	Kind error
	// External says the process is an external executor (a user's
	// program): the text then calls it one and says what rxeq waited for.
	External bool
	// While says what rxeq waited for when it failed ("the result of
	// score_linear"), or "".
	While string
	// Signal is the signal a crashed process died of ("SIGSEGV"), also
	// when the Go runtime of a Go child reported it and exited with status
	// 2; "" when it exited.
	Signal string
	// ExitCode is a crashed process's exit status when Signal is "".
	ExitCode int
	// Timeout is the timeout a timed-out call outlived.
	Timeout time.Duration
	// Detail says how a protocol violation broke the protocol.
	Detail string
	// Stderr is the tail of the process's stderr (for a Go child that
	// died of a signal, what it wrote up to the runtime's report and the
	// report's first lines), or "".
	Stderr string
}

// Error returns the failure's text (see ProcessError).
func (e *ProcessError) Error() string {
	var b strings.Builder
	name := string(e.Executor)
	how := e.exit()
	switch {
	case !e.External && errors.Is(e.Kind, ErrTimedOut):
		fmt.Fprintf(&b, "%s timed out after %s", name, e.Timeout)
	case !e.External && errors.Is(e.Kind, ErrProtocol):
		fmt.Fprintf(&b, "%s worker: bad message from the worker: %s", name, e.Detail)
	case !e.External:
		fmt.Fprintf(&b, "%s crashed: %s", name, how)
	case errors.Is(e.Kind, ErrTimedOut):
		fmt.Fprintf(&b, "external executor timed out: %s gave no answer within %s while waiting for %s (killed)", name, e.Timeout, e.while())
	case errors.Is(e.Kind, ErrProtocol):
		fmt.Fprintf(&b, "executor protocol violation: %s, while waiting for %s: %s", name, e.while(), e.Detail)
	default:
		fmt.Fprintf(&b, "external executor crashed: %s, while waiting for %s: %s", name, e.while(), how)
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		label := "worker"
		if e.External {
			label = "executor"
		}
		fmt.Fprintf(&b, "\n%s stderr (tail):\n%s", label, s)
	}
	return b.String()
}

// Unwrap returns Kind.
func (e *ProcessError) Unwrap() error { return e.Kind }

// exit says how a crashed process ended: "signal SIGSEGV", "exit status 3".
func (e *ProcessError) exit() string {
	if e.Signal != "" {
		return "signal " + e.Signal
	}
	return fmt.Sprintf("exit status %d", e.ExitCode)
}

// while returns While, or "its answer".
func (e *ProcessError) while() string {
	if e.While == "" {
		return "its answer"
	}
	return e.While
}

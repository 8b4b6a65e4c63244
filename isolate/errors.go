package isolate

import (
	"errors"
	"fmt"

	"github.com/rextio/rxeq/executor"
)

// Error kinds of isolated execution. A crash, a timeout or a bad message
// of a worker is an *executor.ProcessError (errors.As) whose text names
// the executor whose code ran: "native crashed: signal SIGSEGV", "torch
// timed out after 10s".
var (
	// ErrCrashed: the worker process died during a call (a signal such as
	// SIGSEGV or SIGABRT, or an unexpected exit). The text reads
	// "native crashed: signal SIGSEGV" or "native crashed: exit status N"
	// ("torch crashed: …" for the torch executor's code). It wraps
	// executor.ErrCrashed.
	ErrCrashed = fmt.Errorf("native %w", executor.ErrCrashed)
	// ErrTimedOut: a call outlived Executor.Timeout; the worker was killed.
	// The text reads "native timed out after 30s" ("torch timed out …").
	// It wraps executor.ErrTimedOut.
	ErrTimedOut = fmt.Errorf("native %w", executor.ErrTimedOut)
	// ErrWorker: the worker could not be started or spoke the protocol
	// wrongly (wrong binary, version mismatch, undecodable message; the
	// last also wraps executor.ErrProtocol).
	ErrWorker = errors.New("native worker")
)

// errBadMessage is the kind of a worker's undecodable message.
var errBadMessage = fmt.Errorf("%w: %w", ErrWorker, executor.ErrProtocol)

// workerError is an ErrWorker of the parent's side whose text names the
// executor whose worker it is: "torch worker: starting …".
type workerError struct {
	text string
}

func (e *workerError) Error() string { return e.text }
func (e *workerError) Unwrap() error { return ErrWorker }

// workerErr returns an error wrapping ErrWorker that reads "NAME worker: "
// and the formatted message.
func workerErr(name executor.Name, format string, args ...any) error {
	return &workerError{text: string(name) + " worker: " + fmt.Sprintf(format, args...)}
}

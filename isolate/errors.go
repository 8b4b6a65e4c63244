package isolate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rextio/rxeq/executor"
)

// Error kinds of isolated execution.
var (
	// ErrCrashed: the worker process died during a call (a signal such as
	// SIGSEGV or SIGABRT, or an unexpected exit). The text reads
	// "native crashed: signal SIGSEGV" or "native crashed: exit status N"
	// ("torch crashed: …" for the torch executor's code).
	ErrCrashed = fmt.Errorf("native %w", executor.ErrCrashed)
	// ErrTimedOut: a call outlived Executor.Timeout; the worker was killed.
	// The text reads "native timed out after 30s" ("torch timed out …").
	ErrTimedOut = fmt.Errorf("native %w", executor.ErrTimedOut)
	// ErrWorker: the worker could not be started or spoke the protocol
	// wrongly (wrong binary, version mismatch, undecodable message).
	ErrWorker = errors.New("native worker")
)

// named gives err, a failure of a worker running executor name's code,
// that executor's name: "torch crashed: signal SIGSEGV" rather than the
// "native crashed: …" the worker's process code writes. The error chain
// is kept (errors.Is still finds ErrCrashed); other errors and the native
// executor's pass unchanged.
func named(name executor.Name, err error) error {
	if err == nil || name == executor.Native {
		return err
	}
	const prefix = "native "
	if text := err.Error(); strings.HasPrefix(text, prefix) {
		return &renamedError{text: string(name) + " " + strings.TrimPrefix(text, prefix), err: err}
	}
	return err
}

// renamedError is an error with another text and the same chain.
type renamedError struct {
	text string
	err  error
}

func (e *renamedError) Error() string { return e.text }
func (e *renamedError) Unwrap() error { return e.err }

// IsCrashText reports whether text (an error's text, or its first line)
// is a worker's crash or timeout of native or torch code: "native crashed:
// signal SIGSEGV", "torch timed out after 10s", …. The fuzzer keeps such
// findings apart by their text.
func IsCrashText(text string) bool {
	for _, name := range []executor.Name{executor.Native, executor.Torch} {
		for _, kind := range []error{ErrCrashed, ErrTimedOut} {
			if strings.HasPrefix(text, string(name)+strings.TrimPrefix(kind.Error(), "native")) {
				return true
			}
		}
	}
	return false
}

package fallback

import (
	"errors"
	"fmt"

	"github.com/rextio/rxeq/program/ir"
)

// ErrInternal is the kind of errors caused by malformed IR (a bug in the
// lowering, or IR built by hand that breaks the IR's invariants), never by
// the inputs of a well-formed function.
var ErrInternal = errors.New("internal error")

// internalf returns an *ir.RuntimeError of kind ErrInternal.
func internalf(fn, format string, args ...any) *ir.RuntimeError {
	return &ir.RuntimeError{Kind: ErrInternal, Func: fn, Detail: "internal error: " + fmt.Sprintf(format, args...)}
}

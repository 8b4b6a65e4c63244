package cgen

import (
	"errors"
	"fmt"
)

// Error kinds of code generation. Package native re-exports them under the
// same names (native.ErrUnsupported is ErrUnsupported), so errors.Is holds
// whichever package a caller names.
var (
	// ErrUnsupported: the program uses an op, dtype or rank the native
	// backend does not compile. The message names the function and what.
	ErrUnsupported = errors.New("not supported by the native backend")
	// ErrTooLarge: a function is too large to hand to the C compiler
	// (more than MaxFuncInstrs instructions). It also wraps
	// ErrUnsupported, so Auto mode runs such a function on the fallback.
	ErrTooLarge = fmt.Errorf("%w: program too large", ErrUnsupported)
)

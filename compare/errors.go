package compare

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

// Errors compares an executor's error (got) with the oracle's
// (want), the way outputs are compared: the oracle is the reference.
//
// Rules:
//   - want nil: got must be nil.
//   - want non-nil: got must be non-nil, of the same kind and with the same
//     message. The kind is the Kind of the first *ir.RuntimeError in the
//     chain (errors.As); an error without one is classified by errors.Is
//     against the ir.Err* sentinels, and one matching none has kind
//     "unclassified". The message is the *ir.RuntimeError's own text
//     ("FUNC: DETAIL"), so wrapping an error for context does not change
//     it; without a RuntimeError it is the whole Error() text.
//
// msg explains a disagreement and is "" when ok.
func Errors(want, got error) (ok bool, msg string) {
	switch {
	case want == nil && got == nil:
		return true, ""
	case want == nil:
		return false, fmt.Sprintf("the oracle succeeded but the executor failed: %s", describeError(got))
	case got == nil:
		return false, fmt.Sprintf("the oracle failed with %s but the executor succeeded", describeError(want))
	}
	wt, wk := errorIdentity(want)
	gt, gk := errorIdentity(got)
	switch {
	case wk != gk:
		return false, fmt.Sprintf("error kind differs: want %s, got %s", describeError(want), describeError(got))
	case wt != gt:
		return false, fmt.Sprintf("error message differs (kind %q): want %q, got %q", kindName(wk), wt, gt)
	}
	return true, ""
}

// ErrorKinds is Errors comparing the kinds alone: want and got must both
// be nil, or both fail with the same kind (of the first *ir.RuntimeError
// in the chain, or the ir.Err* sentinel the error wraps), whatever their
// texts. Two unclassified errors match. For production code that words
// its errors its own way: wrap ir.ErrDivisionByZero, ir.ErrShape, … in
// yours.
func ErrorKinds(want, got error) (ok bool, msg string) {
	if want == nil || got == nil {
		return Errors(want, got)
	}
	_, wk := errorIdentity(want)
	_, gk := errorIdentity(got)
	if wk != gk {
		return false, fmt.Sprintf("error kind differs: want %s, got %s", describeError(want), describeError(got))
	}
	return true, ""
}

// errorIdentity returns the message text compared by Errors and
// the kind sentinel (nil when unclassified).
func errorIdentity(err error) (text string, kind error) {
	var re *ir.RuntimeError
	if errors.As(err, &re) {
		return re.Error(), re.Kind
	}
	for _, k := range ir.ErrorKinds() {
		if errors.Is(err, k) {
			return err.Error(), k
		}
	}
	return err.Error(), nil
}

func kindName(k error) string {
	if k == nil {
		return "unclassified"
	}
	return k.Error()
}

// describeError is an error's kind and quoted text. A multi-line text (a
// crashed worker's stderr, a compiler's diagnostics) is quoted up to its
// first line break and the remaining lines follow as they are, indented,
// so they read as text rather than as one escaped string.
func describeError(err error) string {
	t, k := errorIdentity(err)
	first, rest, multi := strings.Cut(strings.TrimRight(t, "\n"), "\n")
	if !multi {
		return fmt.Sprintf("[%s] %q", kindName(k), first)
	}
	return fmt.Sprintf("[%s] %q\n    %s", kindName(k), first, strings.ReplaceAll(rest, "\n", "\n    "))
}

// Package lock is rxeq's source lock: the //rx:lock and //rx:lock-not
// lines of one function checked against generated C (docs/lock.md is the
// user's reference).
//
// Check checks the lines of one function against a C translation unit,
// scoped to the body of that function's C definition (found structurally,
// so another function can never satisfy a check): "…" is a literal
// substring and `…` an RE2 regexp; positive checks match in order, each
// after the previous match; lock-not must not match anywhere in the body.
// A failure names the check and where the search started, and prints the
// body with the nearest near-miss line marked. CFunction extracts one
// function's C, as `rxeq gen --func` prints it.
//
// It needs no compiler: the runner checks the locks against
// native.Generate's C.
package lock

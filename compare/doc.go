// Package compare is rxeq's judgement: how an executor's outputs and errors
// are held against the reference's (the oracle's). The runner (package
// harness) and the fuzzer (package fuzz) both judge through it, so a case
// and a fuzz finding read the same. docs/comparison.md is the user's
// reference for these rules.
//
// ToOracle judges a float output element by element:
// |got − want| ≤ ATol + RTol·|want| with want the reference's value; NaN
// must be NaN at the same index and ±Inf must match exactly; +0 equals −0.
// The tolerance is the file's //rx:tolerance for that output (Tolerances),
// else the caller's default, else DefaultTolerance (RTol 1e-4, ATol 3e-6,
// measured on the catalog; see tolerance.go). int64 outputs match exactly,
// except class outputs (ClassSources: results assigned only Argmax of a
// float result), which ClassesOwn judges with the near-tie rule: where the
// reference's best scores in a row are within tolerance of each other, any
// of them is accepted and the row is reported; and, where the scores are
// final when the classes are taken, each class must also be the argmax of
// the executor's own scores, so an exact tie is broken the first-index way.
// Outputs applies these rules to every result of a function and names the
// outputs that are missing or not declared.
//
// Errors are compared by Errors: the same kind (the ir.Err* sentinel) and
// the same text as the reference's. ULP measures one executor's float
// outputs against another's in float32 ULPs; ULPs are reported, never
// judged. Every comparison yields metrics (greatest absolute and relative
// differences and their indices, mismatch counts, the worst index,
// near-ties) and a one-line report.
package compare

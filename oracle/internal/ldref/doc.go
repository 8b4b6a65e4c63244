// Package ldref evaluates the oracle's transcendental builtins in the C
// library's long double arithmetic (x86-64: 64-bit significands, eleven
// bits more than float64), as an independent, more precise reference for
// the oracle's tests. It needs cgo; without it the package is empty and
// the tests that use it do not build (they carry the same constraint).
package ldref

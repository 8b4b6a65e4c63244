// Package cgen is the native backend's code generator: it translates the
// lowered IR (program/ir) into one C translation unit that calls only the
// runtime's C API (native/runtime's rx_runtime.h), and says, for each
// generated function, how to call it (FuncABI).
//
// It holds four things that belong together because each depends on the
// exact C the others produce: the generator (gen.go: Generate, Translate
// and the fusions), the mangler and the literal and comment printers
// through which alone program text reaches the C (mangle.go: Mangle,
// CFuncName), the support check that decides what the generator can
// compile (check.go: ErrUnsupported, ErrTooLarge, MaxFuncInstrs, MaxRank,
// MaxSyms), and the table of C macro names the mangler must never keep
// (cmacros_gen.go, produced by `go generate ./native/cgen` through
// native/internal/gencmacros).
//
// Package cgen runs no compiler and loads nothing: it works in every
// build, with or without cgo. Building the C is package native/build's
// job, loading and calling it package native's, which re-exports
// Generate, CFuncName, Mangle, MaxFuncInstrs and the error kinds.
//
// Generate is deterministic (the same program gives the same bytes); the
// forms of the generated C that source locks rely on are documented on
// the generator (gen.go).
package cgen

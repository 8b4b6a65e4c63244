package native

import (
	"sync"

	"github.com/rextio/rxeq/native/cgen"
	"github.com/rextio/rxeq/program/ir"
)

// Generate returns the C translation unit for p: deterministic (the same
// program gives the same bytes), one C function per scoring function in
// program order. Anything the backend cannot compile is an error wrapping
// ErrUnsupported that names the function and the op, dtype or rank.
//
// It forwards to cgen.Generate, kept here for the callers (source locks,
// rxeq gen) that know the backend as package native.
func Generate(p *ir.Program) ([]byte, error) { return cgen.Generate(p) }

// CFuncName returns the C name of the generated function for scoring
// function fn: "rx_fn_" + Mangle(fn). It forwards to cgen.CFuncName.
func CFuncName(fn string) string { return cgen.CFuncName(fn) }

// Mangle returns the C identifier of a program name (see cgen.Mangle, to
// which it forwards).
func Mangle(name string) string { return cgen.Mangle(name) }

// MaxFuncInstrs is the most IR instructions one function may have to be
// compiled natively (cgen.MaxFuncInstrs); a larger one is refused with
// ErrTooLarge before the compiler runs.
const MaxFuncInstrs = cgen.MaxFuncInstrs

// maxRank and maxSyms are the ABI's limits (RX_MAX_RANK, RX_MAX_SYMS).
const (
	maxRank = cgen.MaxRank
	maxSyms = cgen.MaxSyms
)

// funcMeta is what the call bridge needs to know about one generated
// function: its ABI, and how its arguments split into row tiles (rows,
// nil when it is not row-separable; tile.go), which only the call side
// uses.
type funcMeta struct {
	cgen.FuncABI // a copy, so that the call path reads its fields directly
	rows         *rowPlan
	outs         sync.Pool // *outBlock: the blocks of released Results (Result.Release)
}

// badFunc is a function the backend left out, and why.
type badFunc = cgen.Unsupported

// generate emits every supported function of p (cgen.Translate) and
// returns the source, the call side's view of each generated function and
// the unsupported ones in program order.
func generate(p *ir.Program) ([]byte, map[string]*funcMeta, []badFunc) {
	u := cgen.Translate(p)
	metas := make(map[string]*funcMeta, len(u.Funcs))
	for name, abi := range u.Funcs {
		symIdx := make(map[string]int, len(abi.Syms))
		for i, s := range abi.Syms {
			symIdx[s] = i
		}
		metas[name] = &funcMeta{FuncABI: *abi, rows: rowPlanOf(abi.Func, symIdx)}
	}
	return u.Source, metas, u.Unsupported
}

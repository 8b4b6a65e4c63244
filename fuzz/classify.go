package fuzz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"slices"
	"strings"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/tensor"
)

// Category is the class of a finding, from a fixed vocabulary (see
// docs/findings.md).
type Category string

// The categories.
const (
	// CatCrash: an executor crashed, timed out, panicked or could not
	// prepare the program.
	CatCrash Category = "crash"
	// CatErrorMismatch: the errors disagree (one failed, the other did
	// not, or with another kind or text), or an output is missing or of
	// the wrong dtype or shape.
	CatErrorMismatch Category = "error-mismatch"
	// CatNaNInf: a NaN or an infinity where the reference has something
	// else, or the other way round.
	CatNaNInf Category = "nan-inf"
	// CatSignedZero: a zero of the other sign (compared under
	// //rx:signed-zeros), or an infinity of the other sign, which is
	// nearly always a signed zero made observable by a division.
	CatSignedZero Category = "signed-zero"
	// CatPosition: an executor's own result for an element or a row
	// depends on where it sits (position and batch invariance, and the
	// bit-for-bit EMI variants).
	CatPosition Category = "position"
	// CatAccuracy: finite values beyond the tolerance that float32
	// rounding does not explain (the noise runs blame the executor), or
	// a class that flipped.
	CatAccuracy Category = "accuracy"
	// CatRoundTrip: a function that does not come back from its ONNX
	// export and import computing the same bits under the oracle, or
	// whose export or import failed (Checker.RoundTrip; the executor is
	// RoundTripName): a bug of package onnx, not of a framework.
	CatRoundTrip Category = "round-trip"
	// CatSemantics: a documented difference, matched by an entry of the
	// known-discrepancy ledger (the entry says which category it had).
	CatSemantics Category = "semantics"
)

// Categories lists every category in the order tables print them.
var Categories = []Category{CatCrash, CatErrorMismatch, CatNaNInf, CatSignedZero, CatPosition, CatAccuracy, CatRoundTrip, CatSemantics}

// The value classes of a mismatch (Finding.Values): what the reference
// and the executor hold at the elements that disagree, the most telling
// class first.
const (
	ValOppositeInf = "opposite-inf" // +Inf against -Inf
	ValSignedZero  = "signed-zero"  // +0 against -0 (signed-zero comparison)
	ValNaN         = "nan"          // NaN against a number
	ValInf         = "inf"          // an infinity against a finite value
	ValFinite      = "finite"       // finite values too far apart
	// ValSignFlip: finite values that are each other's negation (1 and
	// -1): nearly always a signed zero made observable and then squashed
	// (Tanh(1/x), a clamp).
	ValSignFlip = "sign-flip"
	ValClass    = "class" // int64 outputs (classes) differ
)

var valueRank = map[string]int{ValOppositeInf: 7, ValSignedZero: 6, ValNaN: 5, ValInf: 4, ValFinite: 3, ValSignFlip: 2, ValClass: 1}

// Category classifies the finding (before any ledger entry matched it).
func (f Finding) Category() Category {
	if f.Executor == RoundTripName || f.Kind == KindRoundTrip {
		return CatRoundTrip
	}
	switch f.Kind {
	case KindPanic, KindPrepare:
		return CatCrash
	case KindError, KindReference:
		if f.Crashed {
			return CatCrash
		}
		return CatErrorMismatch
	case KindProblem:
		return CatErrorMismatch
	case KindMetamorphic, KindPosition:
		return CatPosition
	}
	switch f.Values {
	case ValOppositeInf, ValSignedZero, ValSignFlip:
		return CatSignedZero
	case ValNaN, ValInf:
		return CatNaNInf
	}
	return CatAccuracy
}

// CategoryOfValues is the category of a value mismatch of value class v
// (Finding.Values): signed-zero, nan-inf or accuracy.
func CategoryOfValues(v string) Category {
	return Finding{Kind: KindMismatch, Values: v}.Category()
}

// ValuesOfMismatches is the value class of listed mismatches (as
// compare.OutputMetrics.First holds them): the most telling class of any.
func ValuesOfMismatches(want, got []float64, signedZeros bool) string {
	w, g := tensor.FromFloat64(want, len(want)), tensor.FromFloat64(got, len(got))
	return valueClass(w, g, compare.Tolerance{}, signedZeros)
}

// BitValues is the value class of the elements where an executor's two
// results for the same element differ bit for bit (+0 against -0
// included), as invariance findings carry it.
func BitValues(a, b *tensor.Tensor) string {
	return valueClass(a, b, compare.Tolerance{}, true)
}

// valueClass classifies the elements of got that disagree with want
// beyond tol (NaN equal to NaN; with signedZeros, +0 differs from -0),
// returning the most telling class of any of them and the output's shape
// class, or "" when the tensors are not comparable float or int64 data.
func valueClass(want, got *tensor.Tensor, tol compare.Tolerance, signedZeros bool) string {
	if want == nil || got == nil {
		return ""
	}
	if want.DType == tensor.Int64 || got.DType == tensor.Int64 {
		return ValClass
	}
	w, g := want.Float64s(), got.Float64s()
	if len(w) != len(g) {
		return ""
	}
	best := ""
	note := func(c string) {
		if valueRank[c] > valueRank[best] {
			best = c
		}
	}
	for i := range w {
		a, b := w[i], g[i]
		switch {
		case math.IsNaN(a) && math.IsNaN(b):
		case math.IsNaN(a) || math.IsNaN(b):
			note(ValNaN)
		case math.IsInf(a, 0) && math.IsInf(b, 0):
			if a != b {
				note(ValOppositeInf)
			}
		case math.IsInf(a, 0) || math.IsInf(b, 0):
			note(ValInf)
		case a == 0 && b == 0:
			if signedZeros && math.Signbit(a) != math.Signbit(b) {
				note(ValSignedZero)
			}
		case math.Abs(a-b) > tol.ATol+tol.RTol*math.Abs(a):
			if a == -b {
				note(ValSignFlip)
			} else {
				note(ValFinite)
			}
		}
	}
	return best
}

// shapeClass describes a shape for a finding: its rank and the length of
// its rows (the last axis), and where that length falls against the
// vector widths of 4, 8 and 16 floats ("rank 2, rows of 40 (8k+0, 16k+8)").
func shapeClass(shape []int) string {
	if len(shape) == 0 {
		return "scalar"
	}
	n := shape[len(shape)-1]
	return fmt.Sprintf("rank %d, rows of %d (4k+%d, 8k+%d, 16k+%d)", len(shape), n, n%4, n%8, n%16)
}

// ProgramOps lists the ops a program uses, sorted: the builtins it calls
// (Maximum, Softmax, …) and its float operators as Add, Sub, Mul, Div
// and Neg. Integer arithmetic counts too (a program's int64 operators
// cannot be told from float ones without types; CheckedRem and
// CheckedDiv name themselves). A source that does not parse has none.
func ProgramOps(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "ops.rx", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body == nil {
				return false
			}
			ast.Inspect(n.Body, func(m ast.Node) bool {
				switch m := m.(type) {
				case *ast.CallExpr:
					if id, ok := m.Fun.(*ast.Ident); ok {
						set[id.Name] = true
					}
				case *ast.BinaryExpr:
					if name, ok := binOpNames[m.Op]; ok {
						set[name] = true
					}
				case *ast.AssignStmt:
					if name, ok := binOpNames[assignOps[m.Tok]]; ok {
						set[name] = true
					}
				case *ast.UnaryExpr:
					if m.Op == token.SUB {
						set["Neg"] = true
					}
				}
				return true
			})
			return false
		}
		return true
	})
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var binOpNames = map[token.Token]string{token.ADD: "Add", token.SUB: "Sub", token.MUL: "Mul", token.QUO: "Div"}

var assignOps = map[token.Token]token.Token{token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL, token.QUO_ASSIGN: token.QUO}

// DedupKey is the key under which findings are merged: the executor, its
// framework version, the category, the value class and the kernel ops of
// the reduced program (its ops without Add, Sub, Mul, Neg and the int64
// ones, which nearly every program holds and which rarely decide how it
// fails). Two programs that fail the same way in the same kernels share
// it, whatever their seeds, shapes and numbers.
func DedupKey(executor, version string, cat Category, values string, ops []string) string {
	var kernels []string
	for _, op := range ops {
		if !plainOps[op] {
			kernels = append(kernels, op)
		}
	}
	return strings.Join([]string{executor, version, string(cat), values, strings.Join(kernels, "+")}, "|")
}

// plainOps are left out of the dedup key.
var plainOps = map[string]bool{"Add": true, "Sub": true, "Mul": true, "Neg": true, "CheckedRem": true, "CheckedDiv": true}

// KeyID is the directory name of the finding with key: the first 12 hex
// digits of its SHA-256, after the executor and the category.
func KeyID(executor string, cat Category, key string) string {
	sum := sha256.Sum256([]byte(key))
	return executor + "-" + string(cat) + "-" + hex.EncodeToString(sum[:])[:12]
}

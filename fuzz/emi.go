package fuzz

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// KindMetamorphic: an executor computed different outputs, bit for bit,
// for a program and an equivalent variant of it (see Variants).
const KindMetamorphic Kind = "metamorphic"

// Variant is a program rewritten so that it computes exactly the same
// thing, op for op in the same order (equivalence modulo inputs, in the
// manner of EMI testing): every executor must give bit-identical outputs
// for it and for the original.
type Variant struct {
	Source []byte
	What   string // the rewrite, for example "loop at 12:2 split at 3"
}

// The rewrites Variants applies.
const (
	rewriteSplit = iota // for i := range N → two loops over [0, K) and [K, N)
	rewriteWrap         // v = e → for range 1 { v = e }
	rewriteDead         // insert if CheckedRem(1, 1) != 0 { <an earlier assignment> }
	rewriteCount
)

// Variants returns up to n variants of src, each one rewrite away from it,
// drawn with a generator seeded by seed. The rewrites keep every op and
// its order: a constant-bound loop split in two (the second loop rebuilds
// the index as j + K), an assignment wrapped in a loop of one trip, and a
// branch that never runs holding a copy of an earlier assignment. src must
// check; a program with nothing to rewrite has no variants.
func Variants(src []byte, seed uint64, n int) ([]Variant, error) {
	rng := rand.New(rand.NewPCG(seed, 0x656d69)) // "emi"
	var out []Variant
	for tries := 0; len(out) < n && tries < 4*n+8; tries++ {
		v, ok, err := variant(src, rng)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// variant applies one random rewrite to a fresh parse of src.
func variant(src []byte, rng *rand.Rand) (Variant, bool, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "emi.rx", src, parser.ParseComments)
	if err != nil {
		return Variant{}, false, fmt.Errorf("%w: %w", ErrProgram, err)
	}
	consts := map[string]int64{}
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := emiInt(vs.Values[i], nil); ok {
							consts[name.Name] = v
						}
					}
				}
			}
		}
	}
	// Collect the blocks of every function and the candidate sites.
	type site struct {
		block *[]ast.Stmt
		i     int
	}
	var splits, wraps, deads []site
	var walk func(list *[]ast.Stmt)
	walk = func(list *[]ast.Stmt) {
		for i, s := range *list {
			switch s := s.(type) {
			case *ast.AssignStmt:
				if s.Tok != token.DEFINE && len(s.Lhs) == 1 {
					wraps = append(wraps, site{list, i})
					deads = append(deads, site{list, i + 1})
				}
			case *ast.RangeStmt:
				if n, ok := emiInt(s.X, consts); ok && n >= 2 && (s.Key == nil || usesName(s.Body, s.Key.(*ast.Ident).Name)) {
					splits = append(splits, site{list, i})
				}
				walk(&s.Body.List)
			case *ast.IfStmt:
				walk(&s.Body.List)
				for e := s.Else; e != nil; {
					switch x := e.(type) {
					case *ast.BlockStmt:
						walk(&x.List)
						e = nil
					case *ast.IfStmt:
						walk(&x.Body.List)
						e = x.Else
					default:
						e = nil
					}
				}
			}
		}
	}
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
			walk(&fn.Body.List)
		}
	}
	pick := func(sites []site) site { return sites[rng.IntN(len(sites))] }
	var what string
	switch k := rng.IntN(rewriteCount); {
	case k == rewriteSplit && len(splits) > 0:
		s := pick(splits)
		loop := (*s.block)[s.i].(*ast.RangeStmt)
		n, _ := emiInt(loop.X, consts)
		cut := 1 + rng.Int64N(n-1)
		first := &ast.RangeStmt{Key: loop.Key, Tok: loop.Tok, X: intLit(cut), Body: loop.Body}
		j := ident("emi_j")
		body := append([]ast.Stmt(nil), loop.Body.List...)
		if loop.Key != nil {
			body = append([]ast.Stmt{assign(loop.Key.(*ast.Ident).Name, token.DEFINE, bin(token.ADD, j, intLit(cut)))}, body...)
		}
		second := &ast.RangeStmt{Key: j, Tok: token.DEFINE, X: intLit(n - cut), Body: &ast.BlockStmt{List: body}}
		if loop.Key == nil {
			second.Key, second.Tok = nil, token.ILLEGAL
		}
		*s.block = append((*s.block)[:s.i], append([]ast.Stmt{first, second}, (*s.block)[s.i+1:]...)...)
		what = fmt.Sprintf("loop at %s split at %d", fset.Position(loop.Pos()), cut)
	case k == rewriteWrap && len(wraps) > 0:
		s := pick(wraps)
		st := (*s.block)[s.i]
		(*s.block)[s.i] = &ast.RangeStmt{X: intLit(1), Body: &ast.BlockStmt{List: []ast.Stmt{st}}}
		what = fmt.Sprintf("assignment at %s wrapped in a loop of one trip", fset.Position(st.Pos()))
	case k == rewriteDead && len(deads) > 0:
		s := pick(deads)
		st := (*s.block)[s.i-1]
		never := bin(token.NEQ, call("CheckedRem", intLit(1), intLit(1)), intLit(0))
		dead := &ast.IfStmt{Cond: never, Body: &ast.BlockStmt{List: []ast.Stmt{st}}}
		*s.block = append((*s.block)[:s.i], append([]ast.Stmt{dead}, (*s.block)[s.i:]...)...)
		what = fmt.Sprintf("branch that never runs after %s", fset.Position(st.Pos()))
	default:
		return Variant{}, false, nil
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, file); err != nil {
		return Variant{}, false, err
	}
	return Variant{Source: b.Bytes(), What: what}, true, nil
}

// emiInt evaluates an integer literal or a named constant.
func emiInt(e ast.Expr, consts map[string]int64) (int64, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.INT {
			v, err := strconv.ParseInt(e.Value, 0, 64)
			return v, err == nil
		}
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	case *ast.ParenExpr:
		return emiInt(e.X, consts)
	}
	return 0, false
}

// usesName reports whether name appears in n.
func usesName(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// checkVariants runs every function of the original program (prepared as
// orig, one per executor in execs, nil where preparation failed) and of
// each variant at every batch, and reports where an executor's outputs
// differ bit for bit, or its error kinds differ.
func (c *Checker) checkVariants(ctx context.Context, f *program.File, execs []executor.Executor, orig []executor.Prepared, variants []Variant, batches []int, seed uint64) ([]Finding, int, error) {
	var found []Finding
	runs := 0
	for _, v := range variants {
		vf, err := program.Parse("emi.rx", v.Source)
		if err != nil {
			return nil, runs, fmt.Errorf("%w: variant (%s) does not check: %w\n%s", ErrProgram, v.What, err, v.Source)
		}
		vp, err := program.Lower(vf)
		if err != nil {
			return nil, runs, fmt.Errorf("%w: variant (%s): lowering: %w", ErrProgram, v.What, err)
		}
		for i, e := range execs {
			if orig[i] == nil {
				continue
			}
			prep, err := executor.SafePrepare(ctx, e, vf, vp)
			if err != nil {
				found = append(found, Finding{Kind: KindMetamorphic, Reference: e.Name(), Executor: e.Name(), Crashed: crashed(err),
					Detail: fmt.Sprintf("the variant (%s) does not prepare: %v", v.What, err)})
				continue
			}
			for _, fn := range f.Funcs {
				for _, batch := range batches {
					inputs, err := harness.GenerateInputs(f, fn, batch, seed, nil)
					if err != nil {
						prep.Close()
						return nil, runs, err
					}
					a, aErr := safeRun(ctx, orig[i], fn.Name, inputs)
					b, bErr := safeRun(ctx, prep, fn.Name, inputs)
					runs += 2
					if err := ctx.Err(); err != nil {
						prep.Close()
						return nil, runs, err
					}
					base := Finding{Kind: KindMetamorphic, Reference: e.Name(), Executor: e.Name(), Func: fn.Name, Batch: batch}
					if errorKind(aErr) != errorKind(bErr) {
						base.RefKind, base.GotKind = errorKind(aErr), errorKind(bErr)
						base.Crashed = crashed(aErr) || crashed(bErr)
						base.Detail = fmt.Sprintf("the variant (%s) fails differently: %v vs %v", v.What, aErr, bErr)
						found = append(found, base)
						continue
					}
					for _, r := range fn.Results {
						if d := bitDiff(a[r.Name], b[r.Name]); d != "" {
							base.Output = r.Name
							base.Detail = fmt.Sprintf("the variant (%s) differs bit for bit: %s: %s", v.What, r.Name, d)
							found = append(found, base)
							break
						}
					}
				}
			}
			prep.Close()
		}
	}
	return found, runs, nil
}

// bitDiff describes the first element where a and b differ bit for bit
// (NaNs are equal whatever their payload), or "" when they do not.
func bitDiff(a, b *tensor.Tensor) string {
	if a == nil && b == nil {
		return ""
	}
	if a == nil || b == nil || a.DType != b.DType || !equalShape(a.Shape, b.Shape) {
		return fmt.Sprintf("shape or dtype differs: %v vs %v", describe(a), describe(b))
	}
	switch a.DType {
	case tensor.Int64:
		for i := range a.I64 {
			if a.I64[i] != b.I64[i] {
				return fmt.Sprintf("at %s: %d vs %d", tensor.FormatIndex(tensor.Index(a.Shape, i)), a.I64[i], b.I64[i])
			}
		}
	case tensor.Float32:
		for i := range a.F32 {
			x, y := a.F32[i], b.F32[i]
			if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
				return fmt.Sprintf("at %s: %v vs %v", tensor.FormatIndex(tensor.Index(a.Shape, i)), x, y)
			}
		}
	case tensor.Float64:
		for i := range a.F64 {
			x, y := a.F64[i], b.F64[i]
			if math.Float64bits(x) != math.Float64bits(y) && !(x != x && y != y) {
				return fmt.Sprintf("at %s: %v vs %v", tensor.FormatIndex(tensor.Index(a.Shape, i)), x, y)
			}
		}
	}
	return ""
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func describe(t *tensor.Tensor) string {
	if t == nil {
		return "missing"
	}
	return strings.TrimSpace(fmt.Sprintf("%s%v", t.DType, t.Shape))
}

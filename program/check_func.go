package program

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func parseInt(s string) (int64, error) {
	return strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
}

func isTypeName(s string) bool { return s == "float32" || s == "int64" }

// maxRank is the highest tensor rank the language supports.
const maxRank = 4

// funcChecker holds the state of checking one function.
type funcChecker struct {
	*checker
	fn       *Func
	scopes   []map[string]*Var
	declared map[string]token.Position // every := name in the body, for "used before declaration"
	assigned map[*Var]bool             // results definitely assigned so far
	nextID   int

	// Symbolic dimensions: union-find with bindings to sizes.
	symParent map[string]ir.Dim
	symWhere  map[string]token.Position
	symOrder  map[string]int
}

func (c *checker) checkFunc(fd *ast.FuncDecl) *Func {
	if fd.Recv != nil {
		c.errorf(fd.Pos(), "methods are not allowed: declare %s as a plain func", fd.Name.Name)
		return nil
	}
	if fd.Type.TypeParams != nil {
		c.errorf(fd.Type.TypeParams.Pos(), "type parameters are not allowed")
		return nil
	}
	if fd.Body == nil {
		c.errorf(fd.Pos(), "function %s has no body", fd.Name.Name)
		return nil
	}
	fc := &funcChecker{
		checker:   c,
		fn:        &Func{Name: fd.Name.Name, Pos: c.pos(fd.Pos()), symPos: map[string]token.Position{}},
		declared:  map[string]token.Position{},
		assigned:  map[*Var]bool{},
		symParent: map[string]ir.Dim{},
		symWhere:  map[string]token.Position{},
		symOrder:  map[string]int{},
	}
	if fd.Name.Name == "_" {
		c.errorf(fd.Name.Pos(), "a function needs a name")
		return nil
	}
	nerr := len(c.errs)
	fc.pushScope()
	fc.fn.Params = fc.declareFields(fd.Type.Params, ParamVar)
	if fd.Type.Results == nil || len(fd.Type.Results.List) == 0 {
		c.errorf(fd.Type.Pos(), "function %s has no results: declare named results, like (logits [B][C]float32)", fd.Name.Name)
	} else {
		fc.fn.Results = fc.declareFields(fd.Type.Results, ResultVar)
	}
	fc.checkResultSyms()
	if !c.checkDepth(fd.Body) {
		return &Func{Name: fc.fn.Name, Pos: fc.fn.Pos, Params: fc.fn.Params, Results: fc.fn.Results}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					if _, seen := fc.declared[id.Name]; !seen {
						fc.declared[id.Name] = c.pos(id.Pos())
					}
				}
			}
		}
		return true
	})
	fc.fn.Body = fc.checkFuncBody(fd.Body)
	fc.resolveAll()
	if len(c.errs) > nerr {
		return &Func{Name: fc.fn.Name, Pos: fc.fn.Pos, Params: fc.fn.Params, Results: fc.fn.Results} // signature kept for duplicates and directives
	}
	return fc.fn
}

func (fc *funcChecker) pushScope() { fc.scopes = append(fc.scopes, map[string]*Var{}) }
func (fc *funcChecker) popScope()  { fc.scopes = fc.scopes[:len(fc.scopes)-1] }

func (fc *funcChecker) lookup(name string) *Var {
	for i := len(fc.scopes) - 1; i >= 0; i-- {
		if v, ok := fc.scopes[i][name]; ok {
			return v
		}
	}
	return nil
}

// declare adds a variable to the innermost scope; it reports a name that
// is already visible (redeclaration or shadowing), a constant or a builtin.
func (fc *funcChecker) declare(id *ast.Ident, kind VarKind, t ir.Type) *Var {
	pos := fc.pos(id.Pos())
	if id.Name == "_" {
		fc.errorAt(pos, "the blank identifier _ cannot be declared here: give it a name")
		return nil
	}
	if prev := fc.lookup(id.Name); prev != nil {
		fc.errorAt(pos, "%s redeclared (first declared at %s): every name in a function means one thing", id.Name, prev.Pos)
		return nil
	}
	if _, ok := fc.consts[id.Name]; ok {
		fc.errorAt(pos, "%s is a constant and cannot be redeclared", id.Name)
		return nil
	}
	if builtinByName[id.Name] != 0 || isTypeName(id.Name) {
		fc.errorAt(pos, "%s is a builtin and cannot be redeclared", id.Name)
		return nil
	}
	v := &Var{Name: id.Name, Kind: kind, Type: t, Pos: pos, ID: fc.nextID}
	fc.nextID++
	fc.scopes[len(fc.scopes)-1][id.Name] = v
	return v
}

func (fc *funcChecker) declareFields(fl *ast.FieldList, kind VarKind) []*Var {
	var out []*Var
	what := "parameter"
	if kind == ResultVar {
		what = "result"
	}
	for _, field := range fl.List {
		if len(field.Names) == 0 {
			fc.errorf(field.Pos(), "every %s needs a name, like (x [B][F]float32)", what)
			continue
		}
		t, ok := fc.typeExpr(field.Type, kind == ParamVar)
		if !ok {
			continue
		}
		for _, name := range field.Names {
			if v := fc.declare(name, kind, t); v != nil {
				out = append(out, v)
			}
		}
	}
	return out
}

// typeExpr checks a declared type: float32, int64, or [D]…[D]T with T
// float32 or int64 and each D an integer literal, a constant or a symbol.
func (fc *funcChecker) typeExpr(e ast.Expr, param bool) (ir.Type, bool) {
	var shape []ir.Dim
	for {
		at, ok := e.(*ast.ArrayType)
		if !ok {
			break
		}
		if at.Len == nil {
			fc.errorf(at.Pos(), "slice types are not allowed: give every dimension a size, like [B][F]float32")
			return ir.Type{}, false
		}
		d, ok := fc.dimExpr(at.Len, param)
		if !ok {
			return ir.Type{}, false
		}
		shape = append(shape, d)
		e = at.Elt
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		fc.errorf(e.Pos(), "unsupported type %s: want float32, int64 or an array of them like [B][F]float32", fc.exprString(e))
		return ir.Type{}, false
	}
	var dt ir.DType
	switch id.Name {
	case "float32":
		dt = ir.Float32
	case "int64":
		dt = ir.Int64
	default:
		fc.errorf(id.Pos(), "unsupported element type %s: the supported element types are float32 and int64", id.Name)
		return ir.Type{}, false
	}
	if len(shape) > maxRank {
		fc.errorf(e.Pos(), "rank %d is too high: tensors have rank 0 to %d", len(shape), maxRank)
		return ir.Type{}, false
	}
	return ir.Type{DType: dt, Shape: shape}, true
}

func (fc *funcChecker) dimExpr(e ast.Expr, param bool) (ir.Dim, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.INT {
			v, err := parseInt(e.Value)
			if err == nil && v > 0 {
				return ir.Dim{Size: v}, true
			}
		}
		fc.errorf(e.Pos(), "dimension %s must be a positive integer", e.Value)
		return ir.Dim{}, false
	case *ast.Ident:
		if k, ok := fc.consts[e.Name]; ok {
			if k.Value <= 0 {
				fc.errorf(e.Pos(), "dimension %s is %d: a dimension must be positive", e.Name, k.Value)
				return ir.Dim{}, false
			}
			return ir.Dim{Size: k.Value}, true
		}
		if e.Name == "_" || builtinByName[e.Name] != 0 || isTypeName(e.Name) {
			fc.errorf(e.Pos(), "%s cannot name a dimension", e.Name)
			return ir.Dim{}, false
		}
		if _, known := fc.symOrder[e.Name]; !known {
			if !param {
				fc.errorf(e.Pos(), "symbolic dimension %s does not appear in any parameter, so no input can bind it", e.Name)
				return ir.Dim{}, false
			}
			fc.symOrder[e.Name] = len(fc.symOrder)
			fc.fn.Syms = append(fc.fn.Syms, e.Name)
			fc.symWhere[e.Name] = fc.pos(e.Pos())
			fc.fn.symPos[e.Name] = fc.symWhere[e.Name]
		}
		return ir.Dim{Sym: e.Name}, true
	case *ast.Ellipsis:
		fc.errorf(e.Pos(), "[...] is not allowed: give the dimension a size")
		return ir.Dim{}, false
	}
	fc.errorf(e.Pos(), "dimension %s must be an integer literal, a constant or a symbolic name", fc.exprString(e))
	return ir.Dim{}, false
}

// checkResultSyms is a no-op hook kept for symmetry: result dims that are
// symbols not found in parameters are reported by dimExpr.
func (fc *funcChecker) checkResultSyms() {}

// resolve follows symbol bindings to a size or a free symbol.
func (fc *funcChecker) resolve(d ir.Dim) ir.Dim {
	for d.IsSym() {
		p, ok := fc.symParent[d.Sym]
		if !ok {
			return d
		}
		d = p
	}
	return d
}

func (fc *funcChecker) resolveShape(s []ir.Dim) []ir.Dim {
	out := make([]ir.Dim, len(s))
	for i, d := range s {
		out[i] = fc.resolve(d)
	}
	return out
}

// unify makes a and b the same dimension, binding a symbol if needed. It
// returns the unified dim, or ok=false and a message when both are
// different sizes; the message names a symbol bound two ways.
func (fc *funcChecker) unify(a, b ir.Dim, pos token.Position) (ir.Dim, string, bool) {
	ra, rb := fc.resolve(a), fc.resolve(b)
	switch {
	case ra == rb:
		return ra, "", true
	case ra.IsSym() && rb.IsSym():
		if fc.symOrder[ra.Sym] < fc.symOrder[rb.Sym] {
			ra, rb = rb, ra
		}
		fc.symParent[ra.Sym] = rb
		fc.symWhere[ra.Sym] = pos
		return rb, "", true
	case ra.IsSym():
		fc.symParent[ra.Sym] = rb
		fc.symWhere[ra.Sym] = pos
		return rb, "", true
	case rb.IsSym():
		fc.symParent[rb.Sym] = ra
		fc.symWhere[rb.Sym] = pos
		return ra, "", true
	}
	for _, d := range []ir.Dim{a, b} {
		if d.IsSym() {
			r := fc.resolve(d)
			other := ra
			if other == r {
				other = rb
			}
			return ir.Dim{}, sprintf("symbolic dimension %s is bound two ways: to %s at %s and to %s here", d.Sym, r, fc.symWhere[d.Sym], other), false
		}
	}
	return ir.Dim{}, sprintf("%s vs %s", ra, rb), false
}

// resolveAll rewrites every type in the function with its final dims.
func (fc *funcChecker) resolveAll() {
	fix := func(t *ir.Type) { t.Shape = fc.resolveShape(t.Shape) }
	seen := map[*Var]bool{}
	fixVar := func(v *Var) {
		if v != nil && !seen[v] {
			seen[v] = true
			fix(&v.Type)
		}
	}
	for _, v := range fc.fn.Params {
		fixVar(v)
	}
	for _, v := range fc.fn.Results {
		fixVar(v)
	}
	var expr func(e Expr)
	expr = func(e Expr) {
		switch e := e.(type) {
		case *VarRef:
			fixVar(e.Var)
		case *Unary:
			fix(&e.Typ)
			expr(e.X)
		case *Binary:
			fix(&e.Typ)
			expr(e.X)
			expr(e.Y)
		case *Call:
			fix(&e.Typ)
			for _, a := range e.Args {
				expr(a)
			}
		}
	}
	var stmts func([]Stmt)
	stmts = func(body []Stmt) {
		for _, s := range body {
			switch s := s.(type) {
			case *Assign:
				fixVar(s.Var)
				expr(s.Value)
			case *For:
				fixVar(s.Index)
				expr(s.Count)
				stmts(s.Body)
			case *If:
				expr(s.Cond)
				stmts(s.Then)
				stmts(s.Else)
			case *Return:
				for _, v := range s.Values {
					expr(v)
				}
			}
		}
	}
	stmts(fc.fn.Body)
	var free []string
	for _, s := range fc.fn.Syms {
		if r := fc.resolve(ir.Dim{Sym: s}); r.IsSym() && r.Sym == s {
			free = append(free, s)
		}
	}
	fc.fn.Syms = free
}

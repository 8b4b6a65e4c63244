package program

import (
	"go/ast"
	"go/token"

	"github.com/rextio/rxeq/program/ir"
)

// checkFuncBody checks the body; its last statement must be the return.
func (fc *funcChecker) checkFuncBody(body *ast.BlockStmt) []Stmt {
	list := body.List
	n := len(list)
	if n == 0 {
		fc.errorf(body.Rbrace, "missing return at end of function %s", fc.fn.Name)
		return nil
	}
	out := fc.checkStmts(list[:n-1])
	ret, ok := list[n-1].(*ast.ReturnStmt)
	if !ok {
		out = append(out, fc.checkStmts(list[n-1:])...)
		fc.errorf(body.Rbrace, "missing return at end of function %s", fc.fn.Name)
		return out
	}
	if r := fc.checkReturn(ret); r != nil {
		out = append(out, r)
	}
	return out
}

func (fc *funcChecker) checkStmts(list []ast.Stmt) []Stmt {
	var out []Stmt
	for _, s := range list {
		if st := fc.checkStmt(s); st != nil {
			out = append(out, st)
		}
	}
	return out
}

func (fc *funcChecker) checkBlock(b *ast.BlockStmt) []Stmt {
	fc.pushScope()
	defer fc.popScope()
	return fc.checkStmts(b.List)
}

func (fc *funcChecker) checkStmt(s ast.Stmt) Stmt {
	switch s := s.(type) {
	case *ast.AssignStmt:
		return fc.checkAssign(s)
	case *ast.RangeStmt:
		return fc.checkRange(s)
	case *ast.IfStmt:
		return fc.checkIf(s)
	case *ast.ReturnStmt:
		fc.errorf(s.Pos(), "return is only allowed as the last statement of a function")
		return nil
	case *ast.ForStmt:
		fc.errorf(s.Pos(), "only `for i := range N` loops are supported (N an integer constant, an int64 parameter or an int64 local)")
		return nil
	case *ast.EmptyStmt:
		return nil
	case *ast.IncDecStmt:
		fc.errorf(s.Pos(), "%s is not supported: loop indices are read-only and tensors change by assignment", s.Tok)
		return nil
	case *ast.DeclStmt:
		fc.errorf(s.Pos(), "declarations inside a function are not supported: use name := expression")
		return nil
	case *ast.ExprStmt:
		fc.errorf(s.Pos(), "the value of %s is not used: assign it to a variable or a result", fc.exprString(s.X))
		return nil
	}
	fc.errorf(s.Pos(), "unsupported statement: want an assignment, for i := range N, if/else or return")
	return nil
}

var compoundOps = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL, token.QUO_ASSIGN: token.QUO,
}

func (fc *funcChecker) checkAssign(s *ast.AssignStmt) Stmt {
	if len(s.Lhs) != 1 || len(s.Rhs) != 1 {
		fc.errorf(s.Pos(), "assign one value at a time: want name := expression or name = expression")
		return nil
	}
	id, ok := s.Lhs[0].(*ast.Ident)
	if !ok {
		fc.errorf(s.Lhs[0].Pos(), "cannot assign to %s: only whole variables can be assigned", fc.exprString(s.Lhs[0]))
		return nil
	}
	pos := fc.pos(s.Pos())
	rhs := s.Rhs[0]
	if op, ok := compoundOps[s.Tok]; ok {
		rhs = &ast.BinaryExpr{X: id, OpPos: s.TokPos, Op: op, Y: rhs}
	} else if s.Tok != token.DEFINE && s.Tok != token.ASSIGN {
		fc.errorf(s.TokPos, "unsupported assignment operator %s", s.Tok)
		return nil
	}
	if id.Name == "_" && s.Tok == token.ASSIGN {
		// _ = expr evaluates expr for its effect alone, as in Go: a checked
		// operation's error (CheckedDiv(a, b) with b zero) still stops the
		// function. The value is a local named _ that nothing can read (it is
		// in no scope).
		val := fc.checkValue(rhs)
		if val == nil {
			return nil
		}
		v := &Var{Name: "_", Kind: LocalVar, Type: val.Type(), Pos: pos, ID: fc.nextID}
		fc.nextID++
		return &Assign{Pos: pos, Var: v, Define: true, Value: val}
	}
	if s.Tok == token.DEFINE {
		val := fc.checkValue(rhs)
		if val == nil {
			return nil
		}
		v := fc.declare(id, LocalVar, val.Type())
		if v == nil {
			return nil
		}
		return &Assign{Pos: pos, Var: v, Define: true, Value: val}
	}
	v := fc.lookup(id.Name)
	if v == nil {
		fc.undefined(id)
		return nil
	}
	switch v.Kind {
	case ParamVar:
		fc.errorf(id.Pos(), "cannot assign to parameter %s: parameters are read-only", id.Name)
		return nil
	case IndexVar:
		fc.errorf(id.Pos(), "cannot assign to loop index %s", id.Name)
		return nil
	}
	val := fc.checkValue(rhs)
	if v.Kind == ResultVar {
		fc.assigned[v] = true // even if the value is bad: one error, not two
	}
	if val == nil {
		return nil
	}
	val = fc.convertTo(val, v.Type)
	vt := val.Type()
	if vt.DType != v.Type.DType || vt.Rank() != v.Type.Rank() {
		fc.errorf(rhs.Pos(), "cannot assign %s to %s (%s): reassignment keeps dtype and shape", vt, id.Name, v.Type)
		return nil
	}
	for i := range vt.Shape {
		if _, msg, ok := fc.unify(v.Type.Shape[i], vt.Shape[i], fc.pos(rhs.Pos())); !ok {
			fc.errorf(rhs.Pos(), "cannot assign %s to %s (%s): reassignment changes the shape (dimension %d: %s)",
				fc.typeString(vt), id.Name, fc.typeString(v.Type), i, msg)
			return nil
		}
	}
	return &Assign{Pos: pos, Var: v, Value: val}
}

// convertTo turns an integer constant into a float constant when the
// target is float32 (an untyped constant takes the type it needs).
func (fc *funcChecker) convertTo(e Expr, t ir.Type) Expr {
	if lit, ok := e.(*IntLit); ok && t.DType == ir.Float32 {
		return &FloatLit{At: lit.At, Value: float64(lit.Value)}
	}
	return e
}

func (fc *funcChecker) typeString(t ir.Type) string {
	return ir.Type{DType: t.DType, Shape: fc.resolveShape(t.Shape)}.String()
}

// checkValue checks an expression that is stored: it must not be a bool.
func (fc *funcChecker) checkValue(e ast.Expr) Expr {
	val := fc.checkExpr(e)
	if val == nil {
		return nil
	}
	if val.Type().DType == ir.Bool {
		fc.errorf(e.Pos(), "a condition cannot be stored: bools exist only in if conditions")
		return nil
	}
	return val
}

func (fc *funcChecker) checkRange(s *ast.RangeStmt) Stmt {
	pos := fc.pos(s.Pos())
	if s.Value != nil {
		fc.errorf(s.Value.Pos(), "range over an integer yields one value: want for i := range N")
		return nil
	}
	count := fc.checkLoopBound(s.X)
	fc.pushScope()
	defer fc.popScope()
	var index *Var
	if s.Key != nil {
		id, ok := s.Key.(*ast.Ident)
		if !ok || s.Tok != token.DEFINE {
			fc.errorf(s.Key.Pos(), "the loop index must be declared with :=, like for i := range N")
			return nil
		}
		if id.Name != "_" {
			index = fc.declare(id, IndexVar, ir.Type{DType: ir.Int64})
			if index == nil {
				return nil
			}
		}
	}
	// A result assigned in the body counts as assigned after the loop only
	// when the body surely runs (a positive constant count).
	before := fc.snapshot()
	body := fc.checkStmts(s.Body.List)
	if lit, ok := count.(*IntLit); !ok || lit.Value <= 0 {
		fc.assigned = before
	}
	if count == nil {
		return nil
	}
	return &For{Pos: pos, Index: index, Count: count, Body: body}
}

// checkLoopBound checks the N of `for i := range N`: an integer constant
// expression (literals and constants with + - * and parentheses, like -3
// or 2*F; it may be zero or negative, and then the loop runs no
// iteration, as in Go), an int64 scalar parameter, or an int64 scalar
// local variable (n := k + 2). As in Go, the count is read once, before
// the first iteration: the body may assign a local count (n = n - 1), and
// that changes n from then on but not the number of trips.
func (fc *funcChecker) checkLoopBound(e ast.Expr) Expr {
	x := ast.Unparen(e)
	if fc.isConstExpr(x) {
		if v, ok := fc.checkExpr(x).(*IntLit); ok {
			return v
		}
		return nil // checkExpr reported it (an integer literal out of range)
	}
	const want = "an integer constant, an int64 scalar parameter or an int64 scalar local variable"
	if id, ok := x.(*ast.Ident); ok {
		v := fc.lookup(id.Name)
		switch {
		case v == nil:
			fc.undefined(id) // a constant is a constant expression, above
			return nil
		case (v.Kind == ParamVar || v.Kind == LocalVar) && v.Type.IsIntScalar():
			return &VarRef{At: fc.pos(id.Pos()), Var: v}
		case v.Kind == ResultVar && v.Type.IsIntScalar():
			fc.errorf(e.Pos(), "loop bound %s is a result: want %s (copy it first: n := %s)", id.Name, want, id.Name)
			return nil
		case v.Kind == IndexVar:
			fc.errorf(e.Pos(), "loop bound %s is a loop index: want %s (copy it first: n := %s)", id.Name, want, id.Name)
			return nil
		default:
			fc.errorf(e.Pos(), "loop bound %s is %s: want %s", id.Name, fc.typeString(v.Type), want)
			return nil
		}
	}
	fc.errorf(e.Pos(), "loop bound %s must be %s", fc.exprString(e), want)
	return nil
}

// isConstExpr reports whether e is an integer constant expression: integer
// literals and named constants combined with unary + and -, binary + - *
// and parentheses. Its depth is bounded by MaxDepth (checkDepth ran).
func (fc *funcChecker) isConstExpr(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.BasicLit:
			return x.Kind == token.INT
		case *ast.Ident:
			_, ok := fc.consts[x.Name]
			return ok && fc.lookup(x.Name) == nil
		case *ast.ParenExpr:
			e = x.X
		case *ast.UnaryExpr:
			if x.Op != token.ADD && x.Op != token.SUB {
				return false
			}
			e = x.X
		case *ast.BinaryExpr:
			if x.Op != token.ADD && x.Op != token.SUB && x.Op != token.MUL {
				return false
			}
			if !fc.isConstExpr(x.Y) {
				return false
			}
			e = x.X
		default:
			return false
		}
	}
}

func (fc *funcChecker) snapshot() map[*Var]bool {
	m := make(map[*Var]bool, len(fc.assigned))
	for k, v := range fc.assigned {
		m[k] = v
	}
	return m
}

func (fc *funcChecker) checkIf(s *ast.IfStmt) Stmt {
	pos := fc.pos(s.Pos())
	if s.Init != nil {
		fc.errorf(s.Init.Pos(), "if statements cannot have an init statement: assign before the if")
	}
	cond := fc.checkExpr(s.Cond)
	if cond != nil && cond.Type().DType != ir.Bool {
		t := cond.Type()
		if t.DType == ir.Float32 || t.Rank() > 0 {
			fc.errorf(s.Cond.Pos(), "if condition %s is a tensor (%s): conditions must compare integer scalars (no tensor-dependent control flow)", fc.exprString(s.Cond), t)
		} else {
			fc.errorf(s.Cond.Pos(), "if condition %s is %s, not a condition: compare it, like %s != 0", fc.exprString(s.Cond), t, fc.exprString(s.Cond))
		}
		cond = nil
	}
	before := fc.snapshot()
	then := fc.checkBlock(s.Body)
	afterThen := fc.assigned
	fc.assigned = before
	var els []Stmt
	switch e := s.Else.(type) {
	case *ast.BlockStmt:
		els = fc.checkBlock(e)
	case *ast.IfStmt:
		// No scope of its own: an if has no init statement here, so the
		// else-if declares nothing, and a long else-if chain does not
		// deepen the scope stack that every name lookup walks.
		if st := fc.checkIf(e); st != nil {
			els = []Stmt{st}
		}
	}
	if s.Else == nil {
		fc.assigned = before
	} else {
		merged := map[*Var]bool{}
		for v := range afterThen {
			if fc.assigned[v] {
				merged[v] = true
			}
		}
		fc.assigned = merged
	}
	if cond == nil {
		return nil
	}
	return &If{Pos: pos, Cond: cond, Then: then, Else: els}
}

func (fc *funcChecker) checkReturn(s *ast.ReturnStmt) Stmt {
	pos := fc.pos(s.Pos())
	if len(s.Results) == 0 {
		for _, r := range fc.fn.Results {
			if !fc.assigned[r] {
				fc.errorf(s.Pos(), "result %s is not assigned on every path to this return", r.Name)
			}
		}
		return &Return{Pos: pos}
	}
	if len(s.Results) != len(fc.fn.Results) {
		fc.errorf(s.Pos(), "return has %d values, want %d (one per result) or none", len(s.Results), len(fc.fn.Results))
		return nil
	}
	vals := make([]Expr, len(s.Results))
	ok := true
	for i, e := range s.Results {
		r := fc.fn.Results[i]
		v := fc.checkValue(e)
		if v == nil {
			ok = false
			continue
		}
		v = fc.convertTo(v, r.Type)
		vt := v.Type()
		if vt.DType != r.Type.DType || vt.Rank() != r.Type.Rank() {
			fc.errorf(e.Pos(), "cannot return %s as result %s (%s)", fc.typeString(vt), r.Name, fc.typeString(r.Type))
			ok = false
			continue
		}
		for d := range vt.Shape {
			if _, msg, good := fc.unify(r.Type.Shape[d], vt.Shape[d], fc.pos(e.Pos())); !good {
				fc.errorf(e.Pos(), "cannot return %s as result %s (%s): dimension %d: %s", fc.typeString(vt), r.Name, fc.typeString(r.Type), d, msg)
				ok = false
				break
			}
		}
		vals[i] = v
	}
	if !ok {
		return nil
	}
	return &Return{Pos: pos, Values: vals}
}

func (fc *funcChecker) undefined(id *ast.Ident) {
	if p, ok := fc.declared[id.Name]; ok && (p.Line > fc.pos(id.Pos()).Line || (p.Line == fc.pos(id.Pos()).Line && p.Column > fc.pos(id.Pos()).Column)) {
		fc.errorf(id.Pos(), "%s is used before its declaration at %s", id.Name, p)
		return
	}
	fc.errorf(id.Pos(), "undefined: %s", id.Name)
}

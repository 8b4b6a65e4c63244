package program

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

var builtinByName = map[string]Builtin{}

func init() {
	for b := MatMul; b <= CheckedDiv; b++ {
		builtinByName[b.String()] = b
	}
}

// builtinList is the sorted list of builtin names for error messages.
func builtinList() string {
	names := make([]string, 0, len(builtinByName))
	for b := MatMul; b <= CheckedDiv; b++ {
		names = append(names, b.String())
	}
	return strings.Join(names, ", ")
}

func (fc *funcChecker) checkExpr(e ast.Expr) Expr {
	// No e.Pos() up front: a BinaryExpr's Pos walks down its left operands,
	// so calling it on every node of a long a + b + c + … is quadratic.
	switch e := e.(type) {
	case *ast.ParenExpr:
		return fc.checkExpr(e.X)
	case *ast.BasicLit:
		switch e.Kind {
		case token.INT:
			v, err := parseInt(e.Value)
			if err != nil {
				fc.errorf(e.Pos(), "integer literal %s does not fit in int64", e.Value)
				return nil
			}
			return &IntLit{At: fc.pos(e.Pos()), Value: v}
		case token.FLOAT:
			v, err := strconv.ParseFloat(strings.ReplaceAll(e.Value, "_", ""), 64)
			if err != nil {
				fc.errorf(e.Pos(), "float literal %s is out of range", e.Value)
				return nil
			}
			return &FloatLit{At: fc.pos(e.Pos()), Value: v}
		}
		fc.errorf(e.Pos(), "unsupported literal %s: want an integer or float literal", e.Value)
		return nil
	case *ast.Ident:
		return fc.checkIdent(e)
	case *ast.UnaryExpr:
		return fc.checkUnary(e)
	case *ast.BinaryExpr:
		return fc.checkBinary(e)
	case *ast.CallExpr:
		return fc.checkCall(e)
	case *ast.IndexExpr, *ast.IndexListExpr, *ast.SliceExpr:
		fc.errorf(e.Pos(), "indexing and slicing (%s) are not supported: use whole-tensor ops", fc.exprString(e))
		return nil
	}
	fc.errorf(e.Pos(), "unsupported expression %s", fc.exprString(e))
	return nil
}

func (fc *funcChecker) checkIdent(id *ast.Ident) Expr {
	pos := fc.pos(id.Pos())
	if v := fc.lookup(id.Name); v != nil {
		if v.Kind == ResultVar && !fc.assigned[v] {
			fc.errorf(id.Pos(), "result %s is used before it is assigned", id.Name)
			return nil
		}
		return &VarRef{At: pos, Var: v}
	}
	if k, ok := fc.consts[id.Name]; ok {
		return &IntLit{At: pos, Value: k.Value, Name: k.Name}
	}
	if builtinByName[id.Name] != 0 {
		fc.errorf(id.Pos(), "%s is a builtin function: call it, like %s(x, …)", id.Name, id.Name)
		return nil
	}
	if id.Name == "true" || id.Name == "false" {
		fc.errorf(id.Pos(), "%s is only allowed as the keepdims argument of Sum, Mean or Max", id.Name)
		return nil
	}
	fc.undefined(id)
	return nil
}

func (fc *funcChecker) checkUnary(e *ast.UnaryExpr) Expr {
	x := fc.checkExpr(e.X)
	if x == nil {
		return nil
	}
	pos := fc.pos(e.Pos())
	t := x.Type()
	switch e.Op {
	case token.ADD:
		if t.DType == ir.Bool {
			break
		}
		return x
	case token.SUB:
		switch lit := x.(type) {
		case *IntLit:
			return &IntLit{At: pos, Value: -lit.Value}
		case *FloatLit:
			return &FloatLit{At: pos, Value: -lit.Value}
		}
		if t.DType == ir.Float32 || t.IsIntScalar() {
			return &Unary{At: pos, Op: Neg, X: x, Typ: t}
		}
	case token.NOT:
		if t.DType == ir.Bool {
			return &Unary{At: pos, Op: Not, X: x, Typ: t}
		}
		fc.errorf(e.Pos(), "operator ! needs a condition, not %s", fc.typeString(t))
		return nil
	}
	fc.errorf(e.Pos(), "operator %s is not defined on %s", e.Op, fc.typeString(t))
	return nil
}

var binaryOps = map[token.Token]BinaryOp{
	token.ADD: Add, token.SUB: Sub, token.MUL: Mul, token.QUO: Div,
	token.EQL: Eq, token.NEQ: Ne, token.LSS: Lt, token.LEQ: Le, token.GTR: Gt, token.GEQ: Ge,
	token.LAND: AndAnd, token.LOR: OrOr,
}

func (fc *funcChecker) checkBinary(e *ast.BinaryExpr) Expr {
	op, known := binaryOps[e.Op]
	if !known {
		if e.Op == token.REM {
			fc.errorf(e.OpPos, "operator %% is not supported: use CheckedRem(a, b), which fails cleanly on zero")
		} else {
			fc.errorf(e.OpPos, "operator %s is not supported", e.Op)
		}
		return nil
	}
	x, y := fc.checkExpr(e.X), fc.checkExpr(e.Y)
	if x == nil || y == nil {
		return nil
	}
	pos := fc.pos(e.OpPos)
	xt, yt := x.Type(), y.Type()
	switch op {
	case AndAnd, OrOr:
		if xt.DType != ir.Bool || yt.DType != ir.Bool {
			fc.errorf(e.OpPos, "operator %s needs conditions on both sides, not %s and %s", e.Op, fc.typeString(xt), fc.typeString(yt))
			return nil
		}
		return &Binary{At: pos, Op: op, X: x, Y: y, Typ: ir.Type{DType: ir.Bool}}
	case Eq, Ne, Lt, Le, Gt, Ge:
		if xt.IsIntScalar() && yt.IsIntScalar() {
			return &Binary{At: pos, Op: op, X: x, Y: y, Typ: ir.Type{DType: ir.Bool}}
		}
		fc.errorf(e.OpPos, "comparison %s needs int64 scalars on both sides, not %s and %s: conditions cannot depend on tensor values", fc.exprString(e), fc.typeString(xt), fc.typeString(yt))
		return nil
	}
	// Arithmetic. Both integer scalars: integer arithmetic.
	if xt.IsIntScalar() && yt.IsIntScalar() {
		if op == Div {
			fc.errorf(e.OpPos, "integer division is not supported: use CheckedDiv(a, b), which fails cleanly on zero")
			return nil
		}
		xl, xok := x.(*IntLit)
		yl, yok := y.(*IntLit)
		if xok && yok {
			return &IntLit{At: pos, Value: foldInt(op, xl.Value, yl.Value)}
		}
		return &Binary{At: pos, Op: op, X: x, Y: y, Typ: ir.Type{DType: ir.Int64}}
	}
	// Float arithmetic: constants convert; anything else must be float32.
	x, y = fc.convertTo(x, ir.Type{DType: ir.Float32}), fc.convertTo(y, ir.Type{DType: ir.Float32})
	xt, yt = x.Type(), y.Type()
	if xt.DType != ir.Float32 || yt.DType != ir.Float32 {
		fc.errorf(e.OpPos, "mismatched types in %s: %s and %s (arithmetic needs float32 tensors on both sides, or int64 scalars on both; only constants convert)", fc.exprString(e), fc.typeString(xt), fc.typeString(yt))
		return nil
	}
	shape, ok := fc.broadcast(e.OpPos, e.Op.String(), e.X, e.Y, xt, yt)
	if !ok {
		return nil
	}
	return &Binary{At: pos, Op: op, X: x, Y: y, Typ: ir.Type{DType: ir.Float32, Shape: shape}}
}

func foldInt(op BinaryOp, a, b int64) int64 {
	switch op {
	case Add:
		return int64(uint64(a) + uint64(b))
	case Sub:
		return int64(uint64(a) - uint64(b))
	}
	return int64(uint64(a) * uint64(b))
}

// broadcast computes the NumPy broadcast of two shapes: aligned from the
// right, equal dims stay, a size-1 dim stretches, and a symbol meeting a
// different dim is unified with it.
func (fc *funcChecker) broadcast(at token.Pos, what string, ex, ey ast.Expr, xt, yt ir.Type) ([]ir.Dim, bool) {
	n := max(xt.Rank(), yt.Rank())
	out := make([]ir.Dim, n)
	for i := 1; i <= n; i++ {
		var a, b ir.Dim
		ha, hb := xt.Rank()-i >= 0, yt.Rank()-i >= 0
		if ha {
			a = fc.resolve(xt.Shape[xt.Rank()-i])
		}
		if hb {
			b = fc.resolve(yt.Shape[yt.Rank()-i])
		}
		switch {
		case !hb:
			out[n-i] = a
		case !ha:
			out[n-i] = b
		case a == b:
			out[n-i] = a
		case a == ir.Dim{Size: 1}:
			out[n-i] = b
		case b == ir.Dim{Size: 1}:
			out[n-i] = a
		default:
			d, msg, ok := fc.unify(xt.Shape[xt.Rank()-i], yt.Shape[yt.Rank()-i], fc.pos(at))
			if !ok {
				fc.errorf(at, "cannot broadcast %s (%s) with %s (%s) in %s: %s (dimensions must be equal or 1)",
					fc.exprString(ex), fc.typeString(xt), fc.exprString(ey), fc.typeString(yt), what, msg)
				return nil, false
			}
			out[n-i] = d
		}
	}
	if n > maxRank {
		fc.errorf(at, "result rank %d is too high: tensors have rank 0 to %d", n, maxRank)
		return nil, false
	}
	return out, true
}

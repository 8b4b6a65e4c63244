package fuzz

import (
	"go/ast"
	"go/token"
	"math"
	"strconv"
	"strings"
)

// batchSym is the one symbolic dimension generated programs use.
const batchSym = "B"

// maxBatch is the largest batch generated programs run at; bounds assume
// the batch dimension is at most this large.
const maxBatch = 8

// dim is one dimension of a generated type: the batch symbol or a size,
// printed as a named constant when name is set.
type dim struct {
	sym  bool
	size int64
	name string
}

func (d dim) eq(e dim) bool { return d.sym == e.sym && (d.sym || d.size == e.size) }

// extent is the dimension's greatest size (the batch counts as maxBatch).
func (d dim) extent() float64 {
	if d.sym {
		return maxBatch
	}
	return float64(d.size)
}

func (d dim) expr() ast.Expr {
	switch {
	case d.sym:
		return ident(batchSym)
	case d.name != "":
		return ident(d.name)
	}
	return intLit(d.size)
}

var one = dim{size: 1}

// shape is the shape of a generated tensor; nil is rank 0.
type shape []dim

func (s shape) eq(t shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if !s[i].eq(t[i]) {
			return false
		}
	}
	return true
}

func (s shape) key() string {
	var b strings.Builder
	for _, d := range s {
		if d.sym {
			b.WriteString("[B]")
		} else {
			b.WriteString("[" + strconv.FormatInt(d.size, 10) + "]")
		}
	}
	return b.String()
}

// drop removes axis a.
func (s shape) drop(a int) shape {
	out := append(shape{}, s[:a]...)
	return append(out, s[a+1:]...)
}

// keep replaces axis a with size 1 (a keepdims reduction).
func (s shape) keep(a int) shape {
	out := append(shape{}, s...)
	out[a] = one
	return out
}

// insert puts d at axis a.
func (s shape) insert(a int, d dim) shape {
	out := append(shape{}, s[:a]...)
	out = append(out, d)
	return append(out, s[a:]...)
}

func (s shape) transposed() shape { return shape{s[1], s[0]} }

// broadcastsTo reports whether s stretches to exactly t under NumPy
// broadcasting without unifying a symbol with a size: aligned from the
// right, each dim of s equals t's or is 1.
func (s shape) broadcastsTo(t shape) bool {
	if len(s) > len(t) {
		return false
	}
	off := len(t) - len(s)
	for i, d := range s {
		if !d.eq(t[off+i]) && !d.eq(one) {
			return false
		}
	}
	return true
}

func (s shape) typeExpr(elt string) ast.Expr {
	var e ast.Expr = ident(elt)
	for i := len(s) - 1; i >= 0; i-- {
		e = &ast.ArrayType{Len: s[i].expr(), Elt: e}
	}
	return e
}

// AST helpers.

func ident(name string) *ast.Ident { return &ast.Ident{Name: name} }

func intLit(v int64) ast.Expr {
	if v < 0 {
		if v == math.MinInt64 {
			return bin(token.SUB, neg(intLit(math.MaxInt64)), intLit(1))
		}
		return neg(&ast.BasicLit{Kind: token.INT, Value: strconv.FormatInt(-v, 10)})
	}
	return &ast.BasicLit{Kind: token.INT, Value: strconv.FormatInt(v, 10)}
}

func floatLit(v float64) ast.Expr {
	if v < 0 {
		return neg(floatLit(-v))
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return &ast.BasicLit{Kind: token.FLOAT, Value: s}
}

func call(name string, args ...ast.Expr) ast.Expr {
	return &ast.CallExpr{Fun: ident(name), Args: args}
}

func neg(x ast.Expr) ast.Expr { return &ast.UnaryExpr{Op: token.SUB, X: paren(x, 6, false)} }

func not(x ast.Expr) ast.Expr { return &ast.UnaryExpr{Op: token.NOT, X: paren(x, 6, false)} }

// bin builds x op y with the parentheses precedence needs.
func bin(op token.Token, x, y ast.Expr) ast.Expr {
	p := op.Precedence()
	return &ast.BinaryExpr{X: paren(x, p, false), Op: op, Y: paren(y, p, true)}
}

// paren wraps e when its precedence is too low to be an operand of an
// operator of precedence p (right operands of equal precedence too, since
// - and / do not associate).
func paren(e ast.Expr, p int, right bool) ast.Expr {
	var q int
	switch e := e.(type) {
	case *ast.BinaryExpr:
		q = e.Op.Precedence()
	case *ast.UnaryExpr:
		if right || p == 6 {
			return &ast.ParenExpr{X: e} // no "- -x", "x * -y" or "--x"
		}
		q = 6
	default:
		return e
	}
	if q < p || (right && q == p) {
		return &ast.ParenExpr{X: e}
	}
	return e
}

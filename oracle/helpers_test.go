package oracle_test

import (
	"context"
	"go/token"

	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// Hand-built checked trees, until tests can go through program.Parse.

func at(line, col int) token.Position {
	return token.Position{Filename: "t.rx", Line: line, Column: col}
}

func f32(ds ...any) ir.Type { return ir.Type{DType: ir.Float32, Shape: irtest.Dims(ds...)} }
func i64(ds ...any) ir.Type { return ir.Type{DType: ir.Int64, Shape: irtest.Dims(ds...)} }

var boolT = ir.Type{DType: ir.Bool}

// builder assembles a program.Func with unique variable IDs.
type builder struct {
	fn   *program.Func
	next int
}

func newFunc(name string) *builder {
	return &builder{fn: &program.Func{Name: name, Pos: at(1, 1)}}
}

func (b *builder) v(name string, k program.VarKind, t ir.Type) *program.Var {
	b.next++
	return &program.Var{Name: name, Kind: k, Type: t, ID: b.next, Pos: at(1, 1)}
}

func (b *builder) param(name string, t ir.Type) *program.Var {
	v := b.v(name, program.ParamVar, t)
	b.fn.Params = append(b.fn.Params, v)
	return v
}

func (b *builder) result(name string, t ir.Type) *program.Var {
	v := b.v(name, program.ResultVar, t)
	b.fn.Results = append(b.fn.Results, v)
	return v
}

func (b *builder) local(name string, t ir.Type) *program.Var {
	return b.v(name, program.LocalVar, t)
}

func (b *builder) index(name string) *program.Var {
	return b.v(name, program.IndexVar, i64())
}

func (b *builder) body(stmts ...program.Stmt) *program.Func {
	b.fn.Body = stmts
	return b.fn
}

func ref(v *program.Var) program.Expr { return &program.VarRef{At: at(2, 1), Var: v} }
func flit(x float64) program.Expr     { return &program.FloatLit{At: at(2, 1), Value: x} }
func ilit(n int64) program.Expr       { return &program.IntLit{At: at(2, 1), Value: n} }
func neg(x program.Expr) program.Expr {
	return &program.Unary{At: at(2, 1), Op: program.Neg, X: x, Typ: x.Type()}
}
func not(x program.Expr) program.Expr {
	return &program.Unary{At: at(2, 1), Op: program.Not, X: x, Typ: boolT}
}
func assign(v *program.Var, x program.Expr) program.Stmt {
	return &program.Assign{Pos: at(3, 1), Var: v, Value: x}
}
func define(v *program.Var, x program.Expr) program.Stmt {
	return &program.Assign{Pos: at(3, 1), Var: v, Define: true, Value: x}
}
func ret(xs ...program.Expr) program.Stmt { return &program.Return{Pos: at(9, 1), Values: xs} }

func bin(op program.BinaryOp, x, y program.Expr) program.Expr {
	t := x.Type()
	if op >= program.Eq {
		t = boolT
	}
	return &program.Binary{At: at(2, 3), Op: op, X: x, Y: y, Typ: t}
}

func call(b program.Builtin, args ...program.Expr) program.Expr {
	text := make([]string, len(args))
	for i, a := range args {
		text[i] = "arg"
		if r, ok := a.(*program.VarRef); ok {
			text[i] = r.Var.Name
		}
	}
	return &program.Call{At: at(5, 7), Builtin: b, Args: args, ArgText: text, Typ: args[0].Type()}
}

func callAxis(b program.Builtin, x program.Expr, axis int, keep bool) program.Expr {
	c := call(b, x).(*program.Call)
	c.Axis, c.KeepDims = axis, keep
	return c
}

func forN(idx *program.Var, count program.Expr, body ...program.Stmt) program.Stmt {
	return &program.For{Pos: at(4, 1), Index: idx, Count: count, Body: body}
}

func ifElse(cond program.Expr, then, els []program.Stmt) program.Stmt {
	return &program.If{Pos: at(4, 1), Cond: cond, Then: then, Else: els}
}

func stmts(s ...program.Stmt) []program.Stmt { return s }

// apply builds f(x in) (y out) { y = mk(x); return } and runs it on data.
func apply(in, out ir.Type, mk func(x program.Expr) program.Expr, x *tensor.Tensor) *tensor.Tensor {
	b := newFunc("f")
	xv := b.param("x", in)
	yv := b.result("y", out)
	fn := b.body(assign(yv, mk(ref(xv))), ret())
	res, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": x})
	Expect(err).NotTo(HaveOccurred())
	return res["y"]
}

// apply2 builds f(x, y) (z) { z = mk(x, y); return }.
func apply2(tx, ty, tz ir.Type, mk func(x, y program.Expr) program.Expr, x, y *tensor.Tensor) *tensor.Tensor {
	b := newFunc("f")
	xv := b.param("x", tx)
	yv := b.param("y", ty)
	zv := b.result("z", tz)
	fn := b.body(assign(zv, mk(ref(xv), ref(yv))), ret())
	res, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": x, "y": y})
	Expect(err).NotTo(HaveOccurred())
	return res["z"]
}

func t32(shape []int, data ...float32) *tensor.Tensor { return tensor.FromFloat32(data, shape...) }
func sh(d ...int) []int                               { return d }

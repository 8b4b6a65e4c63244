package program

import (
	"go/ast"

	"github.com/rextio/rxeq/program/ir"
)

func (fc *funcChecker) checkCall(e *ast.CallExpr) Expr {
	id, ok := e.Fun.(*ast.Ident)
	if !ok {
		fc.errorf(e.Fun.Pos(), "unknown function %s: want one of %s", fc.exprString(e.Fun), builtinList())
		return nil
	}
	b := builtinByName[id.Name]
	if b == 0 {
		if fc.lookup(id.Name) != nil || fc.funcNames[id.Name] {
			fc.errorf(id.Pos(), "%s is not a builtin: functions do not call each other; want one of %s", id.Name, builtinList())
		} else {
			fc.errorf(id.Pos(), "unknown function %s: want one of %s", id.Name, builtinList())
		}
		return nil
	}
	if e.Ellipsis.IsValid() {
		fc.errorf(e.Ellipsis, "... is not allowed in a call")
		return nil
	}
	call := &Call{At: fc.pos(e.Pos()), Builtin: b}
	for _, a := range e.Args {
		call.ArgText = append(call.ArgText, fc.exprString(a))
	}
	arity := func(usage string, counts ...int) bool {
		for _, n := range counts {
			if len(e.Args) == n {
				return true
			}
		}
		fc.errorf(e.Pos(), "wrong number of arguments to %s: got %d, want %s", id.Name, len(e.Args), usage)
		return false
	}
	// tensorArg checks argument i as a float32 tensor of rank >= minRank.
	tensorArg := func(i, minRank int) Expr {
		x := fc.checkExpr(e.Args[i])
		if x == nil {
			return nil
		}
		x = fc.convertTo(x, ir.Type{DType: ir.Float32})
		t := x.Type()
		if t.DType != ir.Float32 {
			fc.errorf(e.Args[i].Pos(), "argument %d of %s is %s, want a float32 tensor", i+1, id.Name, fc.typeString(t))
			return nil
		}
		if t.Rank() < minRank {
			fc.errorf(e.Args[i].Pos(), "argument %d of %s has rank %d, want rank >= %d", i+1, id.Name, t.Rank(), minRank)
			return nil
		}
		return x
	}
	switch b {
	case MatMul:
		if !arity("2: MatMul(a [M][K]float32, b [K][N]float32)", 2) {
			return nil
		}
		x, y := tensorArg(0, 0), tensorArg(1, 0)
		if x == nil || y == nil {
			return nil
		}
		xt, yt := x.Type(), y.Type()
		if xt.Rank() != 2 || yt.Rank() != 2 {
			fc.errorf(e.Pos(), "MatMul needs two rank-2 tensors, got %s and %s", fc.typeString(xt), fc.typeString(yt))
			return nil
		}
		if _, msg, ok := fc.unify(xt.Shape[1], yt.Shape[0], fc.pos(e.Pos())); !ok {
			fc.errorf(e.Pos(), "MatMul inner dimensions differ: %s is %s and %s is %s (%s)",
				call.ArgText[0], fc.typeString(xt), call.ArgText[1], fc.typeString(yt), msg)
			return nil
		}
		call.Args = []Expr{x, y}
		call.Typ = ir.Type{DType: ir.Float32, Shape: []ir.Dim{xt.Shape[0], yt.Shape[1]}}
	case Transpose:
		if !arity("1: Transpose(x [M][N]float32)", 1) {
			return nil
		}
		x := tensorArg(0, 0)
		if x == nil {
			return nil
		}
		if x.Type().Rank() != 2 {
			fc.errorf(e.Args[0].Pos(), "Transpose needs a rank-2 tensor, got %s", fc.typeString(x.Type()))
			return nil
		}
		s := x.Type().Shape
		call.Args = []Expr{x}
		call.Typ = ir.Type{DType: ir.Float32, Shape: []ir.Dim{s[1], s[0]}}
	case Tanh, Exp, Log, Sigmoid, Relu, Abs, Sqrt:
		if !arity("1: "+id.Name+"(x)", 1) {
			return nil
		}
		x := tensorArg(0, 0)
		if x == nil {
			return nil
		}
		call.Args = []Expr{x}
		call.Typ = x.Type()
	case Maximum, Minimum:
		if !arity("2: "+id.Name+"(a, b)", 2) {
			return nil
		}
		x, y := tensorArg(0, 0), tensorArg(1, 0)
		if x == nil || y == nil {
			return nil
		}
		shape, ok := fc.broadcast(e.Pos(), id.Name, e.Args[0], e.Args[1], x.Type(), y.Type())
		if !ok {
			return nil
		}
		call.Args = []Expr{x, y}
		call.Typ = ir.Type{DType: ir.Float32, Shape: shape}
	case Softmax, LogSoftmax:
		if !arity("2: "+id.Name+"(x, axis)", 2) {
			return nil
		}
		x := tensorArg(0, 1)
		if x == nil {
			return nil
		}
		axis, ok := fc.axisArg(e.Args[1], x.Type().Rank(), id.Name)
		if !ok {
			return nil
		}
		call.Args, call.Axis = []Expr{x}, axis
		call.Typ = x.Type()
	case Sum, Mean, Max, Argmax:
		if !arity("2 or 3: "+id.Name+"(x, axis) or "+id.Name+"(x, axis, true)", 2, 3) {
			return nil
		}
		x := tensorArg(0, 1)
		if x == nil {
			return nil
		}
		axis, ok := fc.axisArg(e.Args[1], x.Type().Rank(), id.Name)
		if !ok {
			return nil
		}
		if len(e.Args) == 3 {
			kd, ok := ast.Unparen(e.Args[2]).(*ast.Ident)
			if !ok || (kd.Name != "true" && kd.Name != "false") {
				fc.errorf(e.Args[2].Pos(), "keepdims argument of %s must be true or false", id.Name)
				return nil
			}
			call.KeepDims = kd.Name == "true"
		}
		call.Args, call.Axis = []Expr{x}, axis
		dt := ir.Float32
		if b == Argmax {
			dt = ir.Int64
		}
		if call.KeepDims {
			s := append([]ir.Dim(nil), x.Type().Shape...)
			s[axis] = ir.Dim{Size: 1}
			call.Typ = ir.Type{DType: dt, Shape: s}
		} else {
			call.Typ = ir.Type{DType: dt, Shape: dropAxis(x.Type().Shape, axis)}
		}
	case CheckedRem, CheckedDiv:
		if !arity("2: "+id.Name+"(a, b int64)", 2) {
			return nil
		}
		for i, a := range e.Args {
			x := fc.checkExpr(a)
			if x == nil {
				return nil
			}
			if !x.Type().IsIntScalar() {
				fc.errorf(a.Pos(), "argument %d of %s is %s, want an int64 scalar", i+1, id.Name, fc.typeString(x.Type()))
				return nil
			}
			call.Args = append(call.Args, x)
		}
		call.Typ = ir.Type{DType: ir.Int64}
	}
	return call
}

// axisArg checks an axis argument: an integer constant in [-rank, rank).
func (fc *funcChecker) axisArg(a ast.Expr, rank int, name string) (int, bool) {
	x := fc.checkExpr(a)
	if x == nil {
		return 0, false
	}
	lit, ok := x.(*IntLit)
	if !ok {
		fc.errorf(a.Pos(), "axis of %s must be an integer constant, not %s", name, fc.exprString(a))
		return 0, false
	}
	v := lit.Value
	if v < -int64(rank) || v >= int64(rank) {
		fc.errorf(a.Pos(), "axis %d is out of range for %s of a rank-%d tensor (want %d to %d)", v, name, rank, -rank, rank-1)
		return 0, false
	}
	if v < 0 {
		v += int64(rank)
	}
	return int(v), true
}

func dropAxis(s []ir.Dim, axis int) []ir.Dim {
	out := make([]ir.Dim, 0, len(s)-1)
	out = append(out, s[:axis]...)
	return append(out, s[axis+1:]...)
}

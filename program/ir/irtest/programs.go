package irtest

import "github.com/rextio/rxeq/program/ir"

// CountAssignedInBody is a program of one function, func f(n int64, x
// [B]float32) (iters int64, y [B]float32): count := n; y = x; for i :=
// range count { iters += 1; y = y + 1; count += 1 }. The IR allows a loop
// count that the body assigns (an imported model, or a lowering that
// reuses a variable; the .rx checker does not: a count is a constant or a
// parameter), and its contract is Go's: the count is read once, before
// the first iteration, so iters == max(n, 0) and y == x + max(n, 0).
func CountAssignedInBody() *ir.Program {
	b := NewFunc("f")
	n := b.Param("n", ir.Int64)
	x := b.Param("x", ir.Float32, "B")
	iters := b.Result("iters", ir.Int64)
	y := b.Result("y", ir.Float32, "B")
	b.Op(ir.ConstI, iters).I = 0
	b.Op(ir.Copy, y, x)
	count := b.Val("count", ir.Var, ir.Int64)
	b.Op(ir.Copy, count, n)
	one := b.ConstI(1)
	onef := b.ConstF(1)
	i := b.Val("i", ir.LoopIndex, ir.Int64)
	b.Loop(i, count, func() {
		b.Op(ir.IAdd, iters, iters, one)
		b.Op(ir.Add, y, y, onef)
		b.Op(ir.IAdd, count, count, one)
	})
	return &ir.Program{File: "t.rx", Funcs: []*ir.Func{b.Fn}}
}

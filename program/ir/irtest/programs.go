package irtest

import "github.com/rextio/rxeq/program/ir"

// CountAssignedInBody is a program of one function, func f(n int64, x
// [B]float32) (iters int64, y [B]float32): count := n; y = x; for i :=
// range count { iters += 1; y = y + 1; count += 1 }: a loop count that
// the body assigns, as the lowering of a .rx local count writes it (see
// CountAssignedSource). Its contract is Go's: the count is read once,
// before the first iteration, so iters == max(n, 0) and y == x + max(n, 0).
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

// CountAssignedSource is the .rx form of the pattern: a function f(x
// [B]float32, k int64) whose loops count to int64 locals that their
// bodies assign. The outer count n := k + 2 is decremented every trip
// (n = n - 1) and a fresh inner count m := 3 is zeroed on its first
// trip. As in Go, each count is read once, before the loop's first
// iteration, so trips == max(k+2, 0), y == x + 4*trips and after ==
// k+2-trips (see CountAssignedWant). An executor that re-read the count
// on every trip would run about half the outer trips and one inner trip.
const CountAssignedSource = `package p

func f(x [B]float32, k int64) (y [B]float32, trips int64, after int64) {
	y = x
	trips = 0
	n := k + 2
	for range n {
		n = n - 1
		trips = trips + 1
		y = y + 1
		m := 3
		for range m {
			m = 0
			y = y + 1
		}
	}
	after = n
	return
}
`

// CountAssignedWant is what CountAssignedSource's f returns for k: the
// trips, the value of n after the loop, and what the loops add to x.
func CountAssignedWant(k int64) (trips, after int64, added float32) {
	trips = max(k+2, 0)
	return trips, k + 2 - trips, float32(4 * trips)
}

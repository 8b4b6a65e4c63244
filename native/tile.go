package native

import (
	"math"

	"github.com/rextio/rxeq/program/ir"
)

// Row tiling. A function whose rows are independent (row-separable: see
// rowPlanOf) computes the same outputs, bit for bit, on a large batch as
// on its row tiles one after another, because every kernel of the native
// runtime computes each row the same way wherever the row sits. A large
// batch therefore runs in row tiles of a few hundred rows inside its one
// call: the generated function's prologue validates the inputs and binds
// the outputs once, for the whole batch, and its body runs once per tile
// (rx_tile, in the runtime's rx_context.c) over sub-views of the
// caller's inputs and outputs (no copies), so that its intermediates stay
// in the core's caches across the function's ops instead of streaming
// through memory once per op: at 65536 rows of score_mlp the hidden layer
// is 8 MB, rewritten by every round of its loop.
//
// A call is tiled only when nothing observable can tell: the function is
// row-separable, no value of the whole batch has a size that overflows
// (which the untiled call reports), and no output shares memory with an
// input or another output. The boundary validation runs once, before the
// first tile, so an invalid call fails exactly as an untiled one.
// Data-dependent control flow and data-dependent errors cannot occur in a
// row-separable function: integer values are scalars, and none is
// computed from a batch-dependent tensor. The one error tiles can change
// is running out of memory: a batch whose intermediates do not fit in
// memory at once may fit a tile at a time. The torch runtime is never
// tiled (its cost is per call of an ATen kernel, so tiles would cost more
// than they save).
//
// Work that does not depend on the batch (a Transpose of a weight, a
// MatMul of two weights) is redone by every tile, so tiles are made large
// enough for it to cost at most 1/tileWorkShare of the rows' work (see
// rowPlan.choose).

// rowPlan says how a row-separable function's arguments split into row
// tiles, and what a tile costs.
type rowPlan struct {
	sym  int    // the batch symbol's index in funcMeta.Syms
	mask uint64 // bit i: argument i (params, then results) has the batch symbol as dim 0
	// values are the dims (dimSpec; the batch dim as 1) of every
	// batch-dependent value, elem their element sizes.
	values [][]int
	elem   []int
	// rowWork and fixedWork estimate a tile's work: per row, the
	// ops that read a batch value; per tile, the ops that do not.
	// Each op's work is the largest product of one of its shapes (dims as
	// in values; a MatMul's includes its inner dimension).
	rowWork, fixedWork [][][]int
	// fixed says that no dim of values, rowWork and fixedWork is a
	// symbol: the default tile and the largest batch without overflow
	// are then computed once, into tile and maxRows.
	fixed         bool
	tile, maxRows int
}

// rowPlanOf returns the row plan of f, or nil when f is not
// row-separable. f is row-separable for symbol S when it has at most 64
// parameters and results and:
//   - every result has S as its dim 0;
//   - every value (parameter, result, local, temporary) either has S as
//     its dim 0 and nowhere else (a row value) or does not mention S;
//   - every op with a row-value operand writes a row value, and mixes no
//     rows: an axis op (Softmax, LogSoftmax, Sum, Mean, Max, Argmax) does
//     not run along axis 0; a MatMul takes rows from its left operand
//     only; an elementwise operand that is not a row value has a lower
//     rank than the result or a dim 0 of 1 (it broadcasts over the rows).
//
// symIdx maps each symbol to its index in the function's symbols.
func rowPlanOf(f *ir.Func, symIdx map[string]int) *rowPlan {
	if len(f.Results) == 0 || f.Results[0].Type.Rank() == 0 || !f.Results[0].Type.Shape[0].IsSym() {
		return nil
	}
	s := f.Results[0].Type.Shape[0].Sym
	p := &rowPlan{sym: symIdx[s], fixed: true}
	// dims is a value's shape as dimSpecs, its batch dim as 1.
	dims := func(v *ir.Value) []int {
		out := make([]int, v.Type.Rank())
		for i, d := range v.Type.Shape {
			switch {
			case d.Sym == s:
				out[i] = 1
			case d.IsSym():
				out[i] = -(symIdx[d.Sym] + 1)
				p.fixed = false
			default:
				out[i] = int(d.Size)
			}
		}
		return out
	}
	rows := map[*ir.Value]bool{}
	for _, v := range f.Values {
		for i, d := range v.Type.Shape {
			if d.Sym == s {
				if i != 0 {
					return nil // the batch elsewhere than dim 0
				}
				rows[v] = true
			}
		}
		if rows[v] {
			p.values = append(p.values, dims(v))
			p.elem = append(p.elem, elemSize(v.Type.DType))
		}
	}
	for _, r := range f.Results {
		if !rows[r] {
			return nil
		}
	}
	args := append(append([]*ir.Value(nil), f.Params...), f.Results...)
	if len(args) > 64 {
		return nil // the runtime keeps a 64-bit mask and the slots of 64 arguments (RX_MAX_TILE_ARGS)
	}
	for i, v := range args {
		if rows[v] {
			p.mask |= 1 << i
		}
	}
	separable := true
	ir.Walk(f.Body, func(in ir.Instr) {
		op, ok := in.(*ir.Op)
		if !ok {
			return
		}
		if !rowLocal(op, rows) {
			separable = false
			return
		}
		var work [][]int
		for _, v := range append([]*ir.Value{op.Dst}, op.Args...) {
			work = append(work, dims(v))
		}
		if op.Kind == ir.MatMul && len(op.Args) == 2 && op.Args[0].Type.Rank() == 2 {
			inner := dims(op.Args[0])[1]
			work = append(work, append(dims(op.Dst), inner))
		}
		if rows[op.Dst] {
			p.rowWork = append(p.rowWork, work)
		} else {
			p.fixedWork = append(p.fixedWork, work)
		}
	})
	if !separable {
		return nil
	}
	if p.fixed {
		p.tile, p.maxRows = p.choose(nil)
	}
	return p
}

// rowLocal reports whether op keeps rows apart (see rowPlanOf).
func rowLocal(op *ir.Op, rows map[*ir.Value]bool) bool {
	anyRow := false
	for _, a := range op.Args {
		anyRow = anyRow || rows[a]
	}
	if !anyRow {
		return true // nothing batch-dependent is read
	}
	dst := op.Dst
	if !rows[dst] {
		return false // rows reduced to a value without them
	}
	switch op.Kind {
	case ir.Copy, ir.Neg, ir.Tanh, ir.Exp, ir.Log, ir.Sigmoid, ir.Relu, ir.Abs, ir.Sqrt:
		return len(op.Args) == 1 && op.Args[0].Type.Rank() == dst.Type.Rank()
	case ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Maximum, ir.Minimum:
		for _, a := range op.Args {
			switch {
			case rows[a]:
				if a.Type.Rank() != dst.Type.Rank() {
					return false
				}
			case a.Type.Rank() == dst.Type.Rank():
				if d := a.Type.Shape[0]; d.IsSym() || d.Size != 1 {
					return false
				}
			}
		}
		return true
	case ir.MatMul:
		return len(op.Args) == 2 && rows[op.Args[0]] && !rows[op.Args[1]]
	case ir.Softmax, ir.LogSoftmax, ir.Sum, ir.Mean, ir.Max, ir.Argmax:
		return len(op.Args) == 1 && op.Axis != 0
	}
	return false // Transpose, and anything new: not known to keep rows apart
}

func elemSize(d ir.DType) int {
	if d == ir.Float32 {
		return 4
	}
	return 8
}

const (
	// tileRowBudget is how many bytes of batch-dependent values a tile
	// may hold: the tile's rows times the bytes per row of every row
	// value of the function. That sum counts every IR value, while the
	// arena gives a slot at most two buffers and moves reuse them, so the
	// tile's real working set is smaller: half of it, about a typical L2
	// cache's half, keeps the inputs' and outputs' rows, the
	// intermediates and the kernels' packed weights in cache
	// (BenchmarkTileRows measures the choice).
	tileRowBudget = 512 << 10
	// minTileRows and maxTileRows bound the default tile.
	minTileRows, maxTileRows = 64, 4096
	// tileWorkShare: a tile is at least large enough that the work every
	// tile repeats (fixedWork) is at most 1/tileWorkShare of its
	// rows' work.
	tileWorkShare = 16
)

// tileRows returns the rows per tile for a batch of the given rows (0: do
// not tile), with the function's other symbols bound in env: override
// when it is positive, else the default tile (choose). It returns 0 when
// the batch fits in one tile or when a row value's size for the whole
// batch overflows (which the untiled call reports).
func (p *rowPlan) tileRows(env *symEnv, rows, override int) int {
	if rows <= minTileRows || (override > 0 && rows <= override) {
		return 0 // most calls: no more work than this
	}
	t, maxRows := p.tile, p.maxRows
	if !p.fixed {
		t, maxRows = p.choose(env)
	}
	if override > 0 {
		t = override
	}
	if t <= 0 || rows <= t || rows > maxRows {
		return 0
	}
	return t
}

// choose returns the default tile (the budget over the bytes per row, a
// multiple of 64 from minTileRows to maxTileRows, raised to a multiple of
// 64 large enough for tileWorkShare) and the largest batch whose row
// values' sizes do not overflow (0 when a row's already does). env binds
// the symbols (nil when there are none).
func (p *rowPlan) choose(env *symEnv) (tile, maxRows int) {
	product := func(dims []int) (int, bool) {
		n := 1
		for _, d := range dims {
			if d < 0 {
				d = env.sym[-d-1]
			}
			if d != 0 && n > math.MaxInt/d {
				return 0, false
			}
			n *= d
		}
		return n, true
	}
	perRow := 0
	for i, dims := range p.values {
		n, ok := product(dims)
		if !ok || n > math.MaxInt/p.elem[i] || perRow > math.MaxInt-n*p.elem[i] {
			return 0, 0
		}
		perRow += n * p.elem[i]
	}
	maxRows = math.MaxInt / max(perRow, 1)
	// work sums each op's largest product, saturating.
	work := func(ops [][][]int) int {
		sum := 0
		for _, shapes := range ops {
			w := 1
			for _, dims := range shapes {
				n, ok := product(dims)
				if !ok {
					return math.MaxInt
				}
				w = max(w, n)
			}
			sum = min(sum, math.MaxInt-w) + w
		}
		return sum
	}
	tile = min(max(tileRowBudget/max(perRow, 1)&^63, minTileRows), maxTileRows)
	fixed, row := work(p.fixedWork), max(work(p.rowWork), 1)
	if fixed/row >= math.MaxInt/tileWorkShare {
		return 0, maxRows // no tile can be large enough: never tile
	}
	need := (fixed/row + 1) * tileWorkShare
	if need > tile {
		tile = (need + 63) &^ 63
	}
	return tile, maxRows
}

package native

import (
	"math"

	"github.com/rextio/rxeq/program/ir"
)

// Row tiling. A function whose rows are independent (row-separable: see
// rowPlanOf) computes the same outputs, bit for bit, on a large batch as
// on its row tiles one after another, because every kernel of the native
// runtime computes each row the same way wherever the row sits. A large
// batch is therefore run as a sequence of invocations on tiles of a few
// hundred rows (sub-views of the caller's inputs and outputs, no copies),
// so that its intermediates stay in the core's caches across the
// function's ops instead of streaming through memory once per op: at
// 65536 rows of score_mlp the hidden layer is 8 MB, rewritten by every
// round of its loop.
//
// A call is tiled only when nothing observable can tell: the function is
// row-separable, its inputs pass the boundary validation (checked in Go
// first, so an invalid call fails exactly as an untiled one), no value
// of the whole batch has a size that overflows (which the untiled call
// reports), and no output shares memory with an input. Data-dependent
// control flow and data-dependent errors cannot occur in a row-separable
// function: integer values are scalars, and none is computed from a
// batch-dependent tensor. The torch runtime is never tiled (its per-op
// cost is per call of an ATen kernel, so tiles would cost more than they
// save).

// rowPlan says how a row-separable function's arguments split into row
// tiles.
type rowPlan struct {
	sym     int     // the batch symbol's index in funcMeta.syms
	rowArgs []int   // the arguments (params, then results) whose dim 0 is the batch symbol
	rowElem []int   // per rowArgs entry: 4 or 8, the element size
	values  [][]int // the dims (dimSpec, the batch dim as 1) of every batch-dependent value
	elem    []int   // the element size of each of values
}

// rowPlanOf returns the row plan of f, or nil when f is not
// row-separable. f is row-separable for symbol S when:
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
	rowValue := func(v *ir.Value) (row, ok bool) {
		for i, d := range v.Type.Shape {
			if d.Sym == s {
				if i != 0 {
					return false, false
				}
				row = true
			}
		}
		return row, true
	}
	rows := map[*ir.Value]bool{}
	p := &rowPlan{sym: symIdx[s]}
	for _, v := range f.Values {
		row, ok := rowValue(v)
		if !ok {
			return nil
		}
		if row {
			rows[v] = true
			dims := make([]int, v.Type.Rank())
			for i, d := range v.Type.Shape {
				switch {
				case i == 0:
					dims[i] = 1
				case d.IsSym():
					dims[i] = -(symIdx[d.Sym] + 1)
				default:
					dims[i] = int(d.Size)
				}
			}
			p.values = append(p.values, dims)
			p.elem = append(p.elem, elemSize(v.Type.DType))
		}
	}
	for _, r := range f.Results {
		if !rows[r] {
			return nil
		}
	}
	args := append(append([]*ir.Value(nil), f.Params...), f.Results...)
	for i, v := range args {
		if rows[v] && i >= 64 {
			return nil // the C trampoline takes a 64-bit mask of arguments
		}
		if rows[v] {
			p.rowArgs = append(p.rowArgs, i)
			p.rowElem = append(p.rowElem, elemSize(v.Type.DType))
		}
	}
	separable := true
	ir.Walk(f.Body, func(in ir.Instr) {
		if op, ok := in.(*ir.Op); ok && !rowLocal(op, rows) {
			separable = false
		}
	})
	if !separable {
		return nil
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

// tileRowBudget is how many bytes of batch-dependent values a tile may
// hold: the tile's rows times the bytes per row of every row value of the
// function. That sum counts every IR value, while the arena gives a slot
// at most two buffers and moves reuse them, so the tile's real working
// set is smaller: half of it, about a typical L2 cache's half, keeps the
// inputs' and outputs' rows, the intermediates and the kernels' packed
// weights in cache (BenchmarkTileRows measures the choice).
const tileRowBudget = 512 << 10

// tileRows returns the rows per tile for a batch of the given rows with
// the symbols of env bound (0: do not tile): the budget over the bytes
// per row of every row value, a multiple of 64 between 64 and 4096. It
// returns 0 when the batch fits in one tile or when a row value's size
// for the whole batch overflows (the untiled call reports it).
func (p *rowPlan) tileRows(env *symEnv, rows int, override int) int {
	perRow := 0
	for i, dims := range p.values {
		n := p.elem[i]
		for _, d := range dims[1:] {
			if d < 0 {
				d = env.sym[-d-1]
			}
			if d != 0 && n > math.MaxInt/d {
				return 0
			}
			n *= d
		}
		if n > 0 && rows > math.MaxInt/n {
			return 0
		}
		perRow += n
		if perRow < 0 || rows > math.MaxInt/max(perRow, 1) {
			return 0
		}
	}
	t := override
	if t == 0 {
		t = tileRowBudget / max(perRow, 1) &^ 63
		t = min(max(t, 64), 4096)
	}
	if t <= 0 || rows <= t {
		return 0
	}
	return t
}

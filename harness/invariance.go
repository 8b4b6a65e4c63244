package harness

import (
	"context"
	"fmt"
	"math"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// RowDependence is how a value of a function depends on the rows of its
// batched inputs (see RowIndependence).
type RowDependence uint8

// The row dependences, ordered: a join is the greatest.
const (
	// RowUniform: the value does not depend on any batched input.
	RowUniform RowDependence = iota
	// RowWise: axis 0 is the batch and row r depends only on row r of
	// the batched inputs.
	RowWise
	// RowMixed: some element depends on several rows, or on where a row
	// sits.
	RowMixed
)

// RowIndependence derives from the IR which results of fn are
// row-independent along the batch: the symbolic dimension sym at axis 0
// of fn's first parameter that has one. A parameter with sym at axis 0 is
// batched (RowWise); others are RowUniform; ok is false when a parameter
// has sym at another axis (its rows cannot follow the others'). Elementwise ops keep rows apart when each RowWise operand
// has the result's rank (so its axis 0 is the result's); MatMul(a, b) does
// when b is RowUniform; Softmax, LogSoftmax and the reductions do along any
// axis but 0; Transpose of a RowWise value mixes. A value assigned under a
// loop count or a condition that is not RowUniform is RowMixed, and a
// variable assigned several times takes the join of its assignments
// (iterated to a fixed point, so loops are covered). ok is false when fn
// has no batched parameter, and when a CheckedRem or CheckedDiv has an
// operand that is not RowUniform (whether the call fails then depends on
// the batch).
func RowIndependence(fn *ir.Func) (sym string, deps map[string]RowDependence, ok bool) {
	for _, p := range fn.Params {
		if p.Type.Rank() > 0 && p.Type.Shape[0].IsSym() {
			sym = p.Type.Shape[0].Sym
			break
		}
	}
	if sym == "" {
		return "", nil, false
	}
	st := make([]RowDependence, len(fn.Values))
	for _, p := range fn.Params {
		for i, d := range p.Type.Shape {
			if d.Sym == sym {
				if i != 0 {
					// Its rows cannot be rearranged with the others'.
					return sym, nil, false
				}
				st[p.ID] = RowWise
			}
		}
	}
	set := func(v *ir.Value, d RowDependence) bool {
		if v.Kind != ir.Temp {
			d = max(d, st[v.ID]) // a variable joins its assignments
		}
		if d == RowWise && (v.Type.Rank() == 0 || v.Type.Shape[0].Sym != sym) {
			d = RowMixed
		}
		if d != st[v.ID] {
			st[v.ID] = d
			return true
		}
		return false
	}
	var walk func(body []ir.Instr, taint RowDependence) bool
	walk = func(body []ir.Instr, taint RowDependence) bool {
		changed := false
		for _, in := range body {
			switch in := in.(type) {
			case *ir.Op:
				d := opDependence(in, st)
				if taint != RowUniform {
					d = RowMixed
				}
				changed = set(in.Dst, d) || changed
			case *ir.For:
				t := max(taint, st[in.Count.ID])
				if in.Index != nil {
					changed = set(in.Index, t) || changed
				}
				changed = walk(in.Body, t) || changed
			case *ir.If:
				t := max(taint, st[in.Cond.ID])
				changed = walk(in.Then, t) || changed
				changed = walk(in.Else, t) || changed
			}
		}
		return changed
	}
	for range 64 {
		if !walk(fn.Body, RowUniform) {
			break
		}
	}
	// A checked division whose operands depend on the batch may fail for
	// one batch and not for another (CheckedRem of an Argmax along axis
	// 0): the function's error, which is the whole call's, is then not
	// row-independent, whatever its results are.
	batchErrors := false
	ir.Walk(fn.Body, func(in ir.Instr) {
		if op, isOp := in.(*ir.Op); isOp && (op.Kind == ir.CheckedRem || op.Kind == ir.CheckedDiv) {
			for _, a := range op.Args {
				if st[a.ID] != RowUniform {
					batchErrors = true
				}
			}
		}
	})
	if batchErrors {
		return sym, nil, false
	}
	deps = map[string]RowDependence{}
	for _, r := range fn.Results {
		deps[r.Name] = st[r.ID]
	}
	return sym, deps, true
}

// opDependence is the row dependence of one op's result from its
// operands'.
func opDependence(op *ir.Op, st []RowDependence) RowDependence {
	rank := op.Dst.Type.Rank()
	switch op.Kind {
	case ir.ConstF, ir.ConstI:
		return RowUniform
	case ir.MatMul:
		if st[op.Args[1].ID] != RowUniform {
			return RowMixed
		}
		return st[op.Args[0].ID]
	case ir.Transpose:
		if st[op.Args[0].ID] != RowUniform {
			return RowMixed
		}
		return RowUniform
	case ir.Softmax, ir.LogSoftmax, ir.Sum, ir.Mean, ir.Max, ir.Argmax:
		d := st[op.Args[0].ID]
		if d == RowWise && op.Axis == 0 {
			return RowMixed
		}
		return d
	}
	d := RowUniform
	for _, a := range op.Args {
		ad := st[a.ID]
		if ad == RowWise && a.Type.Rank() != rank {
			ad = RowMixed
		}
		d = max(d, ad)
	}
	return d
}

// InvarianceRun runs the function under test on inputs.
type InvarianceRun func(ctx context.Context, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error)

// An InvarianceViolation is one way an executor's own result for a row
// depended on where the row sat.
type InvarianceViolation struct {
	Output string
	// What says which rearrangement gave another result: "row 2 alone
	// (batch 1)", "the rows reversed", "the rows shifted down by one".
	What string
	// Base and Other are the elements that differ: the result at the
	// original batch and in the rearrangement, at the same row.
	Base, Other *tensor.Tensor
	Detail      string
}

// CheckInvariance checks one executor against itself: fn's results for
// the rows of inputs (batch = the size of axis 0 of the batched
// parameters, base its outputs there) must be bit-identical (NaN equal
// to NaN, +0 not to −0) to the same rows computed alone (the first, the
// middle and the last row at batch 1), with the rows reversed, and
// shifted down by one (the first row repeated in front, batch+1), so an
// element's result depends neither on its batch nor on its offset.
// RowWise results are compared row by row and RowUniform ones whole;
// RowMixed results are not compared. A run that fails while base did not
// (or the other way round) is a violation too. Nothing is checked (nil)
// when fn has no batched parameter or no result that is not RowMixed.
func CheckInvariance(ctx context.Context, fn *ir.Func, inputs, base map[string]*tensor.Tensor, run InvarianceRun) ([]InvarianceViolation, error) {
	sym, deps, ok := RowIndependence(fn)
	if !ok {
		return nil, nil
	}
	checked := false
	for _, d := range deps {
		checked = checked || d != RowMixed
	}
	if !checked {
		return nil, nil
	}
	batch := -1
	var batched []string
	for _, p := range fn.Params {
		if p.Type.Rank() > 0 && p.Type.Shape[0].Sym == sym {
			batched = append(batched, p.Name)
			if t := inputs[p.Name]; t != nil && len(t.Shape) > 0 {
				batch = t.Shape[0]
			}
		}
	}
	if batch <= 0 {
		return nil, nil
	}
	type arrangement struct {
		what string
		rows []int // rows[i] is the base row that row i of the arrangement holds
	}
	var arrs []arrangement
	for _, r := range uniqueInts(0, batch/2, batch-1) {
		arrs = append(arrs, arrangement{fmt.Sprintf("row %d alone (batch 1)", r), []int{r}})
	}
	if batch > 1 {
		rev := make([]int, batch)
		for i := range rev {
			rev[i] = batch - 1 - i
		}
		arrs = append(arrs, arrangement{"the rows reversed", rev})
	}
	shift := []int{0}
	for i := range batch {
		shift = append(shift, i)
	}
	arrs = append(arrs, arrangement{fmt.Sprintf("the rows shifted down by one (batch %d)", batch+1), shift})

	var out []InvarianceViolation
	for _, a := range arrs {
		in := map[string]*tensor.Tensor{}
		for k, t := range inputs {
			in[k] = t
		}
		for _, name := range batched {
			in[name] = takeRows(inputs[name], a.rows)
		}
		got, err := run(ctx, in)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if err != nil {
			out = append(out, InvarianceViolation{What: a.what, Detail: fmt.Sprintf("%s fails where the original batch does not: %v", a.what, err)})
			continue
		}
		for _, r := range fn.Results {
			d := deps[r.Name]
			b, g := base[r.Name], got[r.Name]
			if d == RowMixed || b == nil || g == nil {
				continue
			}
			want := b
			if d == RowWise {
				want = takeRows(b, a.rows)
			}
			if i, ok := firstBitDiff(want, g); ok {
				idx := tensor.FormatIndex(tensor.Index(g.Shape, i))
				out = append(out, InvarianceViolation{Output: r.Name, What: a.what, Base: want, Other: g,
					Detail: fmt.Sprintf("%s: with %s, element %s is %s where the original batch has %s", r.Name, a.what, idx, fmtBits(g, i), fmtBits(want, i))})
				break
			}
		}
	}
	return out, nil
}

func uniqueInts(xs ...int) []int {
	var out []int
	for _, x := range xs {
		dup := false
		for _, y := range out {
			dup = dup || x == y
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}

// takeRows returns the tensor whose row i (axis 0) is row rows[i] of t.
func takeRows(t *tensor.Tensor, rows []int) *tensor.Tensor {
	if t == nil || len(t.Shape) == 0 || t.Shape[0] == 0 {
		return t
	}
	n := t.Len() / t.Shape[0]
	shape := append([]int{len(rows)}, t.Shape[1:]...)
	out := &tensor.Tensor{DType: t.DType, Shape: shape}
	switch t.DType {
	case tensor.Float32:
		out.F32 = make([]float32, 0, len(rows)*n)
		for _, r := range rows {
			out.F32 = append(out.F32, t.F32[r*n:(r+1)*n]...)
		}
	case tensor.Float64:
		out.F64 = make([]float64, 0, len(rows)*n)
		for _, r := range rows {
			out.F64 = append(out.F64, t.F64[r*n:(r+1)*n]...)
		}
	case tensor.Int64:
		out.I64 = make([]int64, 0, len(rows)*n)
		for _, r := range rows {
			out.I64 = append(out.I64, t.I64[r*n:(r+1)*n]...)
		}
	}
	return out
}

// firstBitDiff returns the first flat index where a and b differ bit for
// bit (NaNs equal whatever their payload; +0 and −0 differ), or a shape
// or dtype difference at index 0.
func firstBitDiff(a, b *tensor.Tensor) (int, bool) {
	if a.DType != b.DType || len(a.Shape) != len(b.Shape) {
		return 0, true
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return 0, true
		}
	}
	switch a.DType {
	case tensor.Float32:
		for i := range a.F32 {
			x, y := a.F32[i], b.F32[i]
			if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
				return i, true
			}
		}
	case tensor.Float64:
		for i := range a.F64 {
			x, y := a.F64[i], b.F64[i]
			if math.Float64bits(x) != math.Float64bits(y) && !(x != x && y != y) {
				return i, true
			}
		}
	case tensor.Int64:
		for i := range a.I64 {
			if a.I64[i] != b.I64[i] {
				return i, true
			}
		}
	}
	return 0, false
}

// fmtBits prints element i of t, with the sign of a zero.
func fmtBits(t *tensor.Tensor, i int) string {
	if i >= t.Len() {
		return "missing"
	}
	switch t.DType {
	case tensor.Int64:
		return fmt.Sprint(t.I64[i])
	case tensor.Float32:
		return fmtSigned(float64(t.F32[i]))
	}
	return fmtSigned(t.F64[i])
}

func fmtSigned(v float64) string {
	if v == 0 && math.Signbit(v) {
		return "-0"
	}
	return fmt.Sprint(v)
}

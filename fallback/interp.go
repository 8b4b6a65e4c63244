package fallback

import (
	"context"
	"fmt"
	"slices"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Interpreter is a function prepared for repeated runs: validated once by
// New, then executed by Run. It holds no mutable state, so one Interpreter
// may serve any number of concurrent Run calls.
type Interpreter struct {
	fn     *ir.Func
	params []ir.ParamSpec
	static [][]int   // concrete shape of each value whose shape has no symbol; nil otherwise
	sym    []int     // IDs of the values whose shapes have symbols
	reads  []int     // how many places read each value
	types  []ir.Type // the distinct types of the values, for ir.CheckSizes
}

// Run executes fn (lowered IR) in float32 on inputs and returns its results
// by name. It is New(fn) followed by Interpreter.Run; prepare once with New
// to run a function many times.
func Run(ctx context.Context, fn *ir.Func, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	it, err := New(fn)
	if err != nil {
		return nil, err
	}
	return it.Run(ctx, inputs)
}

// New validates fn and prepares it for Run. Malformed IR is an error of
// kind ErrInternal (or ir.ErrUnsupported for an op or dtype the interpreter
// does not know).
func New(fn *ir.Func) (it *Interpreter, err error) {
	if fn == nil {
		return nil, internalf("?", "nil function")
	}
	defer func() {
		if r := recover(); r != nil {
			it, err = nil, internalf(fn.Name, "preparing: %v", r)
		}
	}()
	v := &validator{fn: fn}
	if err := v.check(); err != nil {
		return nil, err
	}
	it = &Interpreter{fn: fn, params: fn.ParamList(), static: make([][]int, len(fn.Values)), reads: make([]int, len(fn.Values))}
	ir.Walk(fn.Body, func(in ir.Instr) {
		switch in := in.(type) {
		case *ir.Op:
			for _, a := range in.Args {
				it.reads[a.ID]++
			}
		case *ir.For:
			it.reads[in.Count.ID]++
		case *ir.If:
			it.reads[in.Cond.ID]++
		}
	})
	seen := map[string]bool{}
	for _, val := range fn.Values {
		if key := val.Type.String(); !seen[key] {
			seen[key] = true
			it.types = append(it.types, val.Type)
		}
		symbolic := false
		for _, d := range val.Type.Shape {
			if d.IsSym() {
				symbolic = true
			} else if d.Size < 0 {
				return nil, internalf(fn.Name, "value %s has a negative dimension", val.Ref())
			}
		}
		if symbolic {
			it.sym = append(it.sym, val.ID)
		} else {
			it.static[val.ID] = ir.Concrete(val.Type.Shape, nil)
		}
	}
	return it, nil
}

// Func returns the function the interpreter runs.
func (it *Interpreter) Func() *ir.Func { return it.fn }

// slot is the storage of one value during a run.
type slot struct {
	f   []float32 // float32 tensor data
	i   []int64   // int64 tensor data (rank > 0)
	iv  int64     // int64 scalar
	b   bool      // bool
	set bool      // written (or bound) at least once
}

// state is one run: everything mutable lives here.
type state struct {
	ctx    context.Context
	it     *Interpreter
	fn     *ir.Func
	shapes [][]int
	slots  []slot
}

// Run executes the function on inputs (by parameter name) and returns the
// results by name: float32 results as tensor.Float32, int64 ones as
// tensor.Int64. Inputs are validated and bound by ir.BindInputs; they are
// never modified, and no result shares memory with them. A value whose
// shape would hold more than tensor.MaxElements elements with the bound
// dimensions fails the run with ir.CheckSizes's ErrShape error before
// anything is allocated.
func (it *Interpreter) Run(ctx context.Context, inputs map[string]*tensor.Tensor) (out map[string]*tensor.Tensor, err error) {
	fn := it.fn
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, internalf(fn.Name, "panic: %v", r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, &ir.RuntimeError{Kind: err, Func: fn.Name, Detail: err.Error()}
	}
	env, err := ir.BindInputs(fn.Name, it.params, inputs)
	if err != nil {
		return nil, err
	}
	// Every size below is a product of a value's dims: checked once here,
	// it cannot overflow later.
	if err := ir.CheckSizes(fn.Name, it.types, env); err != nil {
		return nil, err
	}
	st := &state{ctx: ctx, it: it, fn: fn, shapes: make([][]int, len(fn.Values)), slots: make([]slot, len(fn.Values))}
	copy(st.shapes, it.static)
	for _, id := range it.sym {
		shape := ir.Concrete(fn.Values[id].Type.Shape, env)
		for d, n := range shape {
			if n < 0 {
				return nil, internalf(fn.Name, "value %s: dimension %d (%s) is not bound by any input",
					fn.Values[id].Ref(), d, fn.Values[id].Type.Shape[d].Sym)
			}
		}
		st.shapes[id] = shape
	}
	for _, p := range fn.Params {
		t, s := inputs[p.Name], &st.slots[p.ID]
		switch {
		case p.Type.DType == ir.Float32:
			s.f = t.F32
		case p.Type.Rank() == 0:
			s.iv = t.I64[0]
		default:
			s.i = t.I64
		}
		s.set = true
	}
	// Named results start as zeros, as in Go.
	for _, r := range fn.Results {
		s, n := &st.slots[r.ID], tensor.NumElements(st.shapes[r.ID])
		switch {
		case r.Type.DType == ir.Float32:
			s.f = make([]float32, n)
		case r.Type.Rank() > 0:
			s.i = make([]int64, n)
		}
		s.set = true
	}
	if err := st.body(fn.Body); err != nil {
		return nil, err
	}
	out = make(map[string]*tensor.Tensor, len(fn.Results))
	for _, r := range fn.Results {
		s, shape := &st.slots[r.ID], st.shapes[r.ID]
		n := tensor.NumElements(shape)
		switch {
		case r.Type.DType == ir.Float32:
			out[r.Name] = tensor.FromFloat32(s.f[:n:n], shape...)
		case r.Type.Rank() == 0:
			out[r.Name] = tensor.Scalar(s.iv)
		default:
			out[r.Name] = tensor.FromInt64(s.i[:n:n], shape...)
		}
	}
	return out, nil
}

func (st *state) body(body []ir.Instr) error {
	for _, in := range body {
		var err error
		switch in := in.(type) {
		case *ir.Op:
			err = st.op(in)
		case *ir.For:
			err = st.forLoop(in)
		case *ir.If:
			var cond bool
			if cond, err = st.boolean(in.Cond); err == nil {
				if cond {
					err = st.body(in.Then)
				} else {
					err = st.body(in.Else)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (st *state) forLoop(f *ir.For) error {
	n, err := st.int(f.Count)
	if err != nil {
		return err
	}
	for k := int64(0); k < n; k++ {
		if err := st.ctx.Err(); err != nil {
			return &ir.RuntimeError{Kind: err, Func: st.fn.Name, Detail: err.Error()}
		}
		if f.Index != nil {
			s := &st.slots[f.Index.ID]
			s.iv, s.set = k, true
		}
		if err := st.body(f.Body); err != nil {
			return err
		}
	}
	return nil
}

// unset reports a read of a value that nothing has written.
func (st *state) unset(v *ir.Value) error {
	return internalf(st.fn.Name, "value %s is read before it is written", v.Ref())
}

func (st *state) int(v *ir.Value) (int64, error) {
	s := &st.slots[v.ID]
	if !s.set {
		return 0, st.unset(v)
	}
	return s.iv, nil
}

func (st *state) boolean(v *ir.Value) (bool, error) {
	s := &st.slots[v.ID]
	if !s.set {
		return false, st.unset(v)
	}
	return s.b, nil
}

func (st *state) float(v *ir.Value) ([]float32, error) {
	s := &st.slots[v.ID]
	if !s.set {
		return nil, st.unset(v)
	}
	return s.f, nil
}

// dstFloat returns the buffer o writes its float32 result into: the
// destination's own buffer when it is large enough and reusing it is safe
// (inPlace: the op reads an operand that aliases the destination only at
// the index it writes, which holds for elementwise ops whose aliased
// operand has the result's shape), a fresh one otherwise. Destinations are
// never parameters (New checks it) and every buffer belongs to exactly one
// value, so reuse never writes into an input or into another value.
func (st *state) dstFloat(o *ir.Op, inPlace bool) []float32 {
	id := o.Dst.ID
	n := tensor.NumElements(st.shapes[id])
	s := &st.slots[id]
	reuse := cap(s.f) >= n
	for _, a := range o.Args {
		if a.ID == id && (!inPlace || !slices.Equal(st.shapes[a.ID], st.shapes[id])) {
			reuse = false
		}
	}
	if reuse {
		s.f = s.f[:n]
	} else {
		s.f = make([]float32, n)
	}
	s.set = true
	return s.f
}

// shapeError reports operand shapes that do not fit the op (malformed IR:
// the checker guarantees they fit).
func (st *state) shapeError(o *ir.Op) error {
	shapes := make([][]int, len(o.Args))
	for i, a := range o.Args {
		shapes[i] = st.shapes[a.ID]
	}
	return internalf(st.fn.Name, "%s: operand shapes %v do not fit the result shape %v", o, shapes, st.shapes[o.Dst.ID])
}

func (st *state) op(o *ir.Op) error {
	switch o.Kind {
	case ir.ConstF:
		out := st.dstFloat(o, false)
		c := float32(o.F)
		for i := range out {
			out[i] = c
		}
		return nil
	case ir.ConstI:
		s := &st.slots[o.Dst.ID]
		s.iv, s.set = o.I, true
		return nil
	case ir.Copy:
		return st.copyValue(o)
	case ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Maximum, ir.Minimum:
		return st.binary(o)
	case ir.Neg, ir.Tanh, ir.Exp, ir.Log, ir.Sigmoid, ir.Relu, ir.Abs, ir.Sqrt:
		return st.unary(o)
	case ir.MatMul:
		return st.matMul(o)
	case ir.Transpose:
		return st.transpose(o)
	case ir.Softmax, ir.LogSoftmax:
		return st.softmax(o)
	case ir.Sum, ir.Mean, ir.Max:
		return st.reduce(o)
	case ir.Argmax:
		return st.argmax(o)
	}
	if intScalarOp(o.Kind) {
		return st.scalarOp(o)
	}
	return &ir.RuntimeError{Kind: ir.ErrUnsupported, Func: st.fn.Name, Detail: fmt.Sprintf("unsupported op %s", o.Kind)}
}

func (st *state) copyValue(o *ir.Op) error {
	src, dst := &st.slots[o.Args[0].ID], &st.slots[o.Dst.ID]
	if !src.set {
		return st.unset(o.Args[0])
	}
	if o.Args[0].ID == o.Dst.ID {
		return nil
	}
	n := tensor.NumElements(st.shapes[o.Dst.ID])
	// A temp read only by this copy is dead after it: move its buffer into
	// the destination instead of copying, and give the temp the old one.
	move := o.Args[0].Kind == ir.Temp && st.it.reads[o.Args[0].ID] == 1
	switch {
	case o.Dst.Type.DType == ir.Float32:
		if len(src.f) != n {
			return st.shapeError(o)
		}
		if move {
			src.f, dst.f = dst.f, src.f
			break
		}
		out := st.dstFloat(o, false)
		copy(out, src.f)
	case o.Dst.Type.DType == ir.Bool:
		dst.b = src.b
	case o.Dst.Type.Rank() == 0:
		dst.iv = src.iv
	default:
		if len(src.i) != n {
			return st.shapeError(o)
		}
		if move {
			src.i, dst.i = dst.i, src.i
			break
		}
		if cap(dst.i) >= n {
			dst.i = dst.i[:n]
		} else {
			dst.i = make([]int64, n)
		}
		copy(dst.i, src.i)
	}
	dst.set = true
	return nil
}

func (st *state) scalarOp(o *ir.Op) error {
	dst := &st.slots[o.Dst.ID]
	if o.Kind == ir.Not {
		b, err := st.boolean(o.Args[0])
		if err != nil {
			return err
		}
		dst.b, dst.set = !b, true
		return nil
	}
	a, err := st.int(o.Args[0])
	if err != nil {
		return err
	}
	if o.Kind == ir.INeg {
		dst.iv, dst.set = -a, true
		return nil
	}
	b, err := st.int(o.Args[1])
	if err != nil {
		return err
	}
	switch o.Kind {
	case ir.IAdd:
		dst.iv = a + b
	case ir.ISub:
		dst.iv = a - b
	case ir.IMul:
		dst.iv = a * b
	case ir.CheckedDiv:
		q, ok := ir.CheckedDivide(a, b)
		if !ok {
			return ir.CheckedError(o.Site, a, b)
		}
		dst.iv = q
	case ir.CheckedRem:
		r, ok := ir.CheckedRemainder(a, b)
		if !ok {
			return ir.CheckedError(o.Site, a, b)
		}
		dst.iv = r
	case ir.Eq:
		dst.b = a == b
	case ir.Ne:
		dst.b = a != b
	case ir.Lt:
		dst.b = a < b
	case ir.Le:
		dst.b = a <= b
	case ir.Gt:
		dst.b = a > b
	case ir.Ge:
		dst.b = a >= b
	}
	dst.set = true
	return nil
}

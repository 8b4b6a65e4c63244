package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
	"github.com/rextio/rxeq/program/ir"
)

// The versions Export writes: Debian's python3-onnx 1.12 checks them, and
// ONNX Runtime runs them.
const (
	IRVersion = 8
	Opset     = 17
)

// Meta is what a model says about where it came from.
type Meta struct {
	Source  string // the .rx file (or catalog scenario) as the user named it
	Version string // rxeq's version, the model's producer_version
}

// Export writes function fn of the lowered program p as one ONNX model
// (IR 8, opset 17), deterministically: the same program and Meta give the
// same bytes. Describe gives the model's inputs and outputs. The mapping
// of every IR instruction is in docs/onnx.md.
func Export(p *ir.Program, fn string, meta Meta) ([]byte, error) {
	m, err := build(p, fn, meta)
	if err != nil {
		return nil, err
	}
	return m.Marshal(), nil
}

func build(p *ir.Program, fn string, meta Meta) (m *onnxpb.Model, err error) {
	sig, err := Describe(p, fn)
	if err != nil {
		return nil, err
	}
	f := p.Func(fn)
	defer func() {
		// The exporter panics with exportError on IR it cannot write;
		// anything else is a bug and stays a panic.
		if r := recover(); r != nil {
			e, ok := r.(exportError)
			if !ok {
				panic(r)
			}
			m, err = nil, e.err
		}
	}()
	x := newExporter(f, sig)
	g := x.function()
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	m = &onnxpb.Model{
		IRVersion:       IRVersion,
		ProducerName:    "rxeq",
		ProducerVersion: valid(meta.Version),
		DocString:       valid(fmt.Sprintf("rxeq scoring function %s from %s", f.Name, meta.Source)),
		Graph:           g,
		OpsetImport:     []onnxpb.OperatorSetID{{Domain: "", Version: Opset}},
		MetadataProps: []onnxpb.StringStringEntry{
			{Key: "rxeq.function", Value: valid(f.Name)},
			{Key: "rxeq.source", Value: valid(meta.Source)},
		},
	}
	return m, nil
}

type exportError struct{ err error }

func fail(format string, args ...any) {
	panic(exportError{fmt.Errorf("%w: onnx export: "+format, append([]any{ir.ErrUnsupported}, args...)...)})
}

// graph is one ONNX graph being built: the function's, a Loop body or an
// If branch. cur maps a value ID to the name holding its current value
// (outer-scope names are visible in subgraphs, as ONNX allows); local
// holds the names this graph's nodes define.
type graph struct {
	nodes    []*onnxpb.Node
	cur      map[int]string
	produced map[string]bool // outputs of this graph's nodes
}

func newGraph() *graph { return &graph{cur: map[int]string{}, produced: map[string]bool{}} }

func (g *graph) add(n *onnxpb.Node) {
	g.nodes = append(g.nodes, n)
	for _, o := range n.Output {
		g.produced[o] = true
	}
}

type exporter struct {
	fn     *ir.Func
	sig    *Signature
	errID  int // the pseudo value holding the error state
	nvals  int
	next   int // counter for fresh names
	stack  []*graph
	consts map[string]string // constant key -> name, defined in the top graph
	ints   map[string]int64  // names known to hold an int64 scalar constant
	sites  map[*ir.Op]int
	// liveOut is, per For and If, the values read after it; liveHead,
	// per For, the values live at its head (read after it, or read by
	// the body before the body writes them).
	liveOut  map[ir.Instr][]bool
	liveHead map[*ir.For][]bool
	// final is, per top-level instruction, the results (and the error
	// state) it writes for the last time: its output for them carries
	// the model's output name.
	final   map[ir.Instr][]int
	outName map[int]string // result ID (or errID) -> model output name
	// rename maps a temp that is copied into a result by the next
	// top-level instruction, and read nowhere else, to the result's
	// model name, so the op writes the output itself.
	rename    map[int]string
	constInts map[*ir.Value]int64
	errInit   string
}

func newExporter(f *ir.Func, sig *Signature) *exporter {
	x := &exporter{fn: f, sig: sig, errID: len(f.Values), nvals: len(f.Values) + 1,
		consts: map[string]string{}, ints: map[string]int64{}, sites: map[*ir.Op]int{},
		liveOut: map[ir.Instr][]bool{}, liveHead: map[*ir.For][]bool{}, final: map[ir.Instr][]int{}, outName: map[int]string{},
		rename: map[int]string{}, constInts: constInts(f)}
	k := 0
	ir.Walk(f.Body, func(in ir.Instr) {
		if op, ok := in.(*ir.Op); ok && (op.Kind == ir.CheckedDiv || op.Kind == ir.CheckedRem) {
			k++
			if canFail(op, x.constInts) {
				x.sites[op] = k
			} else {
				x.sites[op] = -k
			}
		}
	})
	for i, v := range f.Results {
		x.outName[v.ID] = sig.Outputs[i].Name
	}
	return x
}

func (x *exporter) top() *graph   { return x.stack[0] }
func (x *exporter) inner() *graph { return x.stack[len(x.stack)-1] }

// fresh returns a new intermediate name: "rx_v" + a counter + "_" + base.
func (x *exporter) fresh(base string) string {
	x.next++
	if b := sanitize(base); b != "" {
		return fmt.Sprintf("rx_v%d_%s", x.next, b)
	}
	return fmt.Sprintf("rx_v%d", x.next)
}

// node appends a node to the innermost graph and returns its first output.
func (x *exporter) node(op string, inputs []string, out string, attrs ...*onnxpb.Attribute) string {
	x.inner().add(&onnxpb.Node{OpType: op, Input: inputs, Output: []string{out}, Attribute: attrs})
	return out
}

func (x *exporter) op(op, base string, attrs []*onnxpb.Attribute, inputs ...string) string {
	return x.node(op, inputs, x.fresh(base), attrs...)
}

func attrInt(name string, v int64) *onnxpb.Attribute {
	return &onnxpb.Attribute{Name: name, Type: onnxpb.AttrInt, I: v}
}

func attrInts(name string, v ...int64) *onnxpb.Attribute {
	return &onnxpb.Attribute{Name: name, Type: onnxpb.AttrInts, Ints: v}
}

func attrGraph(name string, g *onnxpb.Graph) *onnxpb.Attribute {
	return &onnxpb.Attribute{Name: name, Type: onnxpb.AttrGraph, G: g}
}

// constant returns the name of a Constant node holding the tensor, made
// once per model in the function's graph (visible to every subgraph).
func (x *exporter) constant(t *onnxpb.Tensor, base string) string {
	key := fmt.Sprint(t.DataType, t.Dims, t.RawData)
	if n, ok := x.consts[key]; ok {
		return n
	}
	name := x.fresh(base)
	x.top().add(&onnxpb.Node{OpType: "Constant", Output: []string{name},
		Attribute: []*onnxpb.Attribute{{Name: "value", Type: onnxpb.AttrTensor, T: t}}})
	x.consts[key] = name
	return name
}

func int64Tensor(dims []int64, v ...int64) *onnxpb.Tensor {
	raw := make([]byte, 0, 8*len(v))
	for _, e := range v {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(e))
	}
	return &onnxpb.Tensor{Dims: dims, DataType: onnxpb.TypeInt64, RawData: raw}
}

// constI returns a rank-0 int64 constant.
func (x *exporter) constI(v int64) string {
	n := x.constant(int64Tensor(nil, v), "const")
	x.ints[n] = v
	return n
}

// constVec returns a rank-1 int64 constant.
func (x *exporter) constVec(v ...int64) string {
	return x.constant(int64Tensor([]int64{int64(len(v))}, v...), "const")
}

// constF returns a rank-0 float32 constant: v rounded to float32 once.
// When rounding changes v, the Constant node's doc_string keeps the
// literal's float64 value (LiteralDoc), so Import gives back the literal
// the oracle computes with.
func (x *exporter) constF(v float64) string {
	raw := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	t := &onnxpb.Tensor{DataType: onnxpb.TypeFloat, RawData: raw}
	if float64(float32(v)) == v || math.IsNaN(v) {
		return x.constant(t, "const")
	}
	doc := LiteralDoc + strconv.FormatFloat(v, 'g', -1, 64)
	key := fmt.Sprint(t.DataType, t.Dims, t.RawData, doc)
	if n, ok := x.consts[key]; ok {
		return n
	}
	name := x.fresh("const")
	x.top().add(&onnxpb.Node{OpType: "Constant", Output: []string{name}, DocString: doc,
		Attribute: []*onnxpb.Attribute{{Name: "value", Type: onnxpb.AttrTensor, T: t}}})
	x.consts[key] = name
	return name
}

// LiteralDoc starts the doc_string of a Constant node that Export writes
// for a float literal that float32 does not hold exactly; the literal's
// float64 value follows.
const LiteralDoc = "rxeq literal "

// elemType is the ONNX element type of a dtype.
func elemType(d ir.DType) int32 {
	switch d {
	case ir.Float32:
		return onnxpb.TypeFloat
	case ir.Int64:
		return onnxpb.TypeInt64
	case ir.Bool:
		return onnxpb.TypeBool
	}
	fail("unsupported dtype %s", d)
	return 0
}

func valueInfo(name string, t ir.Type) *onnxpb.ValueInfo {
	shape := &onnxpb.TensorShape{}
	for _, d := range t.Shape {
		if d.IsSym() {
			shape.Dim = append(shape.Dim, onnxpb.Dimension{Param: d.Sym})
		} else {
			shape.Dim = append(shape.Dim, onnxpb.Dimension{Value: d.Size, HasValue: true})
		}
	}
	return &onnxpb.ValueInfo{Name: name, Type: &onnxpb.Type{Tensor: &onnxpb.TensorType{ElemType: elemType(t.DType), Shape: shape}}}
}

var errType = ir.Type{DType: ir.Int64, Shape: []ir.Dim{{Size: 3}}}

func (x *exporter) typeOf(id int) ir.Type {
	if id == x.errID {
		return errType
	}
	return x.fn.Values[id].Type
}

func (x *exporter) baseOf(id int) string {
	if id == x.errID {
		return "error"
	}
	return x.fn.Values[id].Name
}

// function builds the function's graph.
func (x *exporter) function() *onnxpb.Graph {
	f := x.fn
	g := newGraph()
	x.stack = []*graph{g}
	out := &onnxpb.Graph{Name: f.Name, DocString: "rxeq function " + f.Name + " at " + f.Pos}
	for i, p := range f.Params {
		name := x.sig.Inputs[i].Name
		g.cur[p.ID] = name
		out.Input = append(out.Input, valueInfo(name, p.Type))
	}
	x.liveness()
	outs := make([]int, 0, len(f.Results)+1)
	for _, r := range f.Results {
		outs = append(outs, r.ID)
	}
	if x.sig.Error != "" {
		x.outName[x.errID] = ErrorOutput
		outs = append(outs, x.errID)
	}
	for i, in := range f.Body {
		x.final[in] = nil
		for _, id := range outs {
			if x.writes(in, id) && !slices.ContainsFunc(f.Body[i+1:], func(later ir.Instr) bool { return x.writes(later, id) }) {
				x.final[in] = append(x.final[in], id)
			}
		}
	}
	reads := map[int]int{}
	ir.Walk(f.Body, func(in ir.Instr) {
		switch in := in.(type) {
		case *ir.Op:
			for _, a := range in.Args {
				reads[a.ID]++
			}
		case *ir.For:
			reads[in.Count.ID]++
		case *ir.If:
			reads[in.Cond.ID]++
		}
	})
	for i := 0; i+1 < len(f.Body); i++ {
		op, ok1 := f.Body[i].(*ir.Op)
		cp, ok2 := f.Body[i+1].(*ir.Op)
		if ok1 && ok2 && cp.Kind == ir.Copy && op.Dst.Kind == ir.Temp && cp.Args[0] == op.Dst && reads[op.Dst.ID] == 1 &&
			op.Kind != ir.ConstF && op.Kind != ir.ConstI && op.Kind != ir.Copy && slices.Contains(x.final[cp], cp.Dst.ID) {
			x.rename[op.Dst.ID] = x.outName[cp.Dst.ID]
		}
	}
	if x.sig.Error != "" {
		x.errInit = x.constVec(0, 0, 0)
		g.cur[x.errID] = x.errInit
	}
	x.body(f.Body)
	for i, r := range f.Results {
		name := x.sig.Outputs[i].Name
		if cur := x.lookup(r.ID); cur != name {
			x.node("Identity", []string{cur}, name)
		}
		out.Output = append(out.Output, valueInfo(name, r.Type))
	}
	if x.sig.Error != "" {
		if cur := x.lookup(x.errID); cur != ErrorOutput {
			x.node("Identity", []string{cur}, ErrorOutput)
		}
		out.Output = append(out.Output, valueInfo(ErrorOutput, errType))
	}
	out.Node = g.nodes
	return out
}

// lookup returns the name holding value id's current value. A result read
// before anything wrote it is zero, as in Go: a zero tensor of its shape
// is made in the function's graph.
func (x *exporter) lookup(id int) string {
	if n, ok := x.inner().cur[id]; ok {
		return n
	}
	if id == x.errID || x.fn.Values[id].Kind != ir.Result {
		fail("value %s is read before it is written", x.fn.Values[id].Ref())
	}
	saved := x.stack
	x.stack = x.stack[:1]
	z := x.zeros(x.fn.Values[id])
	x.stack = saved
	for _, g := range x.stack {
		g.cur[id] = z
	}
	return z
}

// zeros makes a zero tensor of v's type in the innermost graph.
func (x *exporter) zeros(v *ir.Value) string {
	t := v.Type
	if t.Rank() == 0 {
		switch t.DType {
		case ir.Float32:
			return x.constF(0)
		case ir.Int64:
			return x.constI(0)
		}
		fail("no zero value of %s", t)
	}
	var parts []string
	static := true
	for _, d := range t.Shape {
		if d.IsSym() {
			static = false
		}
	}
	var shape string
	if static {
		dims := make([]int64, t.Rank())
		for i, d := range t.Shape {
			dims[i] = d.Size
		}
		shape = x.constVec(dims...)
	} else {
		for _, d := range t.Shape {
			if !d.IsSym() {
				parts = append(parts, x.constVec(d.Size))
				continue
			}
			parts = append(parts, x.symDim(d.Sym))
		}
		shape = x.op("Concat", "shape", []*onnxpb.Attribute{attrInt("axis", 0)}, parts...)
	}
	var value *onnxpb.Tensor
	if t.DType == ir.Float32 {
		value = &onnxpb.Tensor{Dims: []int64{1}, DataType: onnxpb.TypeFloat, RawData: []byte{0, 0, 0, 0}}
	} else {
		value = int64Tensor([]int64{1}, 0)
	}
	return x.op("ConstantOfShape", v.Name+"_zero", []*onnxpb.Attribute{{Name: "value", Type: onnxpb.AttrTensor, T: value}}, shape)
}

// symDim returns a [1] int64 tensor holding symbolic dimension sym's
// size, read from the first parameter that has it.
func (x *exporter) symDim(sym string) string {
	for i, p := range x.fn.Params {
		for d, dim := range p.Type.Shape {
			if dim.Sym == sym {
				return x.op("Shape", sym, []*onnxpb.Attribute{attrInt("start", int64(d)), attrInt("end", int64(d+1))}, x.sig.Inputs[i].Name)
			}
		}
	}
	fail("symbolic dimension %s is not bound by any parameter", sym)
	return ""
}

// writes reports whether instruction in (or anything nested in it) writes
// value id.
func (x *exporter) writes(in ir.Instr, id int) bool {
	found := false
	ir.Walk([]ir.Instr{in}, func(in ir.Instr) {
		switch in := in.(type) {
		case *ir.Op:
			if in.Dst.ID == id || id == x.errID && x.sites[in] > 0 {
				found = true
			}
		case *ir.For:
			if in.Index != nil && in.Index.ID == id {
				found = true
			}
		}
	})
	return found
}

// written returns the values body writes, loop indices excluded.
func (x *exporter) written(body []ir.Instr) []bool {
	w := make([]bool, x.nvals)
	ir.Walk(body, func(in ir.Instr) {
		if op, ok := in.(*ir.Op); ok {
			w[op.Dst.ID] = true
			if x.sites[op] > 0 {
				w[x.errID] = true
			}
		}
	})
	return w
}

// liveness computes liveOut for every For and If of the function.
func (x *exporter) liveness() {
	end := make([]bool, x.nvals)
	for _, r := range x.fn.Results {
		end[r.ID] = true
	}
	end[x.errID] = x.sig.Error != ""
	x.liveIn(x.fn.Body, end)
}

// liveIn returns the values live before body given those live after it,
// recording liveOut of the control flow inside.
func (x *exporter) liveIn(body []ir.Instr, out []bool) []bool {
	live := slices.Clone(out)
	for i := len(body) - 1; i >= 0; i-- {
		switch in := body[i].(type) {
		case *ir.Op:
			live[in.Dst.ID] = false
			for _, a := range in.Args {
				live[a.ID] = true
			}
			if x.sites[in] > 0 {
				live[x.errID] = true
			}
		case *ir.If:
			x.liveOut[in] = slices.Clone(live)
			t := x.liveIn(in.Then, live)
			e := x.liveIn(in.Else, live)
			for id := range live {
				live[id] = t[id] || e[id]
			}
			live[in.Cond.ID] = true
		case *ir.For:
			x.liveOut[in] = slices.Clone(live)
			head := slices.Clone(live)
			for {
				b := x.liveIn(in.Body, head)
				if in.Index != nil {
					b[in.Index.ID] = false
				}
				changed := false
				for id := range head {
					if b[id] && !head[id] {
						head[id], changed = true, true
					}
				}
				if !changed {
					break
				}
			}
			x.liveHead[in] = slices.Clone(head)
			live = head
			live[in.Count.ID] = true
			if x.sig.Error != "" {
				live[x.errID] = true
			}
		}
	}
	return live
}

func (x *exporter) body(body []ir.Instr) {
	for _, in := range body {
		switch in := in.(type) {
		case *ir.Op:
			x.instr(in)
		case *ir.For:
			x.loop(in)
		case *ir.If:
			x.branch(in)
		}
	}
}

// dstName returns the name an instruction's output for value id gets: the
// result's model name when in is the last top-level instruction writing
// it (isFinal), a fresh name otherwise.
func (x *exporter) dstName(in ir.Instr, id int) string {
	if x.isFinal(in, id) {
		return x.outName[id]
	}
	if n, ok := x.rename[id]; ok && len(x.stack) == 1 {
		return n
	}
	return x.fresh(x.baseOf(id))
}

func (x *exporter) isFinal(in ir.Instr, id int) bool {
	return len(x.stack) == 1 && slices.Contains(x.final[in], id)
}

func (x *exporter) set(id int, name string) { x.inner().cur[id] = name }

var unaryOps = map[ir.OpKind]string{
	ir.Neg: "Neg", ir.Tanh: "Tanh", ir.Exp: "Exp", ir.Log: "Log", ir.Sigmoid: "Sigmoid",
	ir.Relu: "Relu", ir.Abs: "Abs", ir.Sqrt: "Sqrt", ir.INeg: "Neg", ir.Not: "Not",
}

var binaryOps = map[ir.OpKind]string{
	ir.Add: "Add", ir.Sub: "Sub", ir.Mul: "Mul", ir.Div: "Div", ir.Maximum: "Max", ir.Minimum: "Min",
	ir.MatMul: "MatMul", ir.IAdd: "Add", ir.ISub: "Sub", ir.IMul: "Mul",
	ir.Eq: "Equal", ir.Lt: "Less", ir.Le: "LessOrEqual", ir.Gt: "Greater", ir.Ge: "GreaterOrEqual",
}

var reduceOps = map[ir.OpKind]string{ir.Sum: "ReduceSum", ir.Mean: "ReduceMean", ir.Max: "ReduceMax"}

func (x *exporter) args(o *ir.Op, n int) []string {
	if len(o.Args) != n {
		fail("%s has %d operands, want %d", o.Kind, len(o.Args), n)
	}
	out := make([]string, n)
	for i, a := range o.Args {
		out[i] = x.lookup(a.ID)
	}
	return out
}

func (x *exporter) instr(o *ir.Op) {
	id := o.Dst.ID
	keep := int64(0)
	if o.KeepDims {
		keep = 1
	}
	switch o.Kind {
	case ir.ConstF, ir.ConstI, ir.Copy:
		var src string
		switch o.Kind {
		case ir.ConstF:
			src = x.constF(o.F)
		case ir.ConstI:
			src = x.constI(o.I)
		default:
			src = x.args(o, 1)[0]
		}
		if x.isFinal(o, id) && src != x.outName[id] {
			x.set(id, x.node("Identity", []string{src}, x.outName[id]))
		} else {
			x.set(id, src) // no node: the value is another name's
		}
		return
	case ir.Ne:
		a := x.args(o, 2)
		eq := x.op("Equal", "eq", nil, a...)
		x.set(id, x.node("Not", []string{eq}, x.dstName(o, id)))
		return
	case ir.CheckedDiv, ir.CheckedRem:
		x.checked(o)
		return
	}
	if name, ok := unaryOps[o.Kind]; ok {
		x.set(id, x.node(name, x.args(o, 1), x.dstName(o, id)))
		return
	}
	if name, ok := binaryOps[o.Kind]; ok {
		x.set(id, x.node(name, x.args(o, 2), x.dstName(o, id)))
		return
	}
	a := x.args(o, 1)
	out := x.dstName(o, id)
	axis := int64(o.Axis)
	switch o.Kind {
	case ir.Transpose:
		x.node("Transpose", a, out, attrInts("perm", 1, 0))
	case ir.Softmax:
		x.node("Softmax", a, out, attrInt("axis", axis))
	case ir.LogSoftmax:
		x.node("LogSoftmax", a, out, attrInt("axis", axis))
	case ir.Sum:
		// Opset 13 moved ReduceSum's axes to an input.
		x.node("ReduceSum", []string{a[0], x.constVec(axis)}, out, attrInt("keepdims", keep))
	case ir.Mean, ir.Max:
		x.node(reduceOps[o.Kind], a, out, attrInts("axes", axis), attrInt("keepdims", keep))
	case ir.Argmax:
		x.node("ArgMax", a, out, attrInt("axis", axis), attrInt("keepdims", keep), attrInt("select_last_index", 0))
	default:
		fail("op %s has no ONNX form", o.Kind)
	}
	x.set(id, out)
}

// checked writes CheckedDiv and CheckedRem. Their operands never reach
// Div with a zero divisor or MinInt64 / -1 (ONNX Runtime's int64 Div
// raises SIGFPE there): the divisor is replaced by 1 where rxeq fails (or,
// for the remainder, where it is -1, whose remainder is 0 for every
// dividend), and the first failing site is recorded in the error state
// (site, lhs, rhs). The remainder is a - (a / b) * b with Div's truncation,
// which is Go's %: ONNX's Mod is either Python's (fmod=0, the sign of the
// divisor) or goes through double (fmod=1, inexact above 2^53).
func (x *exporter) checked(o *ir.Op) {
	ab := x.args(o, 2)
	a, b := ab[0], ab[1]
	if c, ok := x.constInts[o.Args[1]]; ok && c != 0 && c != -1 {
		// The divisor is a constant other than 0 and -1: nothing can
		// fail, and Div gets no operands that crash it.
		out := x.dstName(o, o.Dst.ID)
		if o.Kind == ir.CheckedDiv {
			x.node("Div", []string{a, b}, out)
		} else {
			q := x.op("Div", "quotient", nil, a, b)
			p := x.op("Mul", "product", nil, q, b)
			x.node("Sub", []string{a, p}, out)
		}
		x.set(o.Dst.ID, out)
		return
	}
	zero, one, minus := x.constI(0), x.constI(1), x.constI(-1)
	bad := x.op("Equal", "divisor_zero", nil, b, zero)
	subst := bad
	isMinus := x.op("Equal", "divisor_minus_one", nil, b, minus)
	if o.Kind == ir.CheckedDiv {
		isMin := x.op("Equal", "dividend_min", nil, a, x.constI(math.MinInt64))
		over := x.op("And", "overflow", nil, isMin, isMinus)
		bad = x.op("Or", "bad", nil, bad, over)
		subst = bad
	} else {
		subst = x.op("Or", "substitute", nil, bad, isMinus)
	}
	safe := x.op("Where", "safe_divisor", nil, subst, one, b)
	out := x.dstName(o, o.Dst.ID)
	if o.Kind == ir.CheckedDiv {
		x.node("Div", []string{a, safe}, out)
	} else {
		q := x.op("Div", "quotient", nil, a, safe)
		p := x.op("Mul", "product", nil, q, safe)
		x.node("Sub", []string{a, p}, out)
	}
	x.set(o.Dst.ID, out)
	if x.sites[o] < 0 {
		return // a remainder by the constant -1: 0, and no error
	}
	// The error state keeps the first failure.
	old := x.lookup(x.errID)
	first := bad
	if old != x.errInit {
		site := x.op("Gather", "error_site", []*onnxpb.Attribute{attrInt("axis", 0)}, old, zero)
		clean := x.op("Equal", "no_error", nil, site, zero)
		first = x.op("And", "first_error", nil, bad, clean)
	}
	axes := x.constVec(0)
	state := x.op("Concat", "error_here", []*onnxpb.Attribute{attrInt("axis", 0)},
		x.constVec(int64(x.sites[o])), x.op("Unsqueeze", "lhs", nil, a, axes), x.op("Unsqueeze", "rhs", nil, b, axes))
	x.set(x.errID, x.node("Where", []string{first, state, old}, x.dstName(o, x.errID)))
}

// noError returns a bool scalar that is true while the error state holds
// no failure, or "" when nothing has written it.
func (x *exporter) noError() string {
	if x.sig.Error == "" {
		return ""
	}
	cur := x.lookup(x.errID)
	if cur == x.errInit {
		return ""
	}
	site := x.op("Gather", "error_site", []*onnxpb.Attribute{attrInt("axis", 0)}, cur, x.constI(0))
	return x.op("Equal", "no_error", nil, site, x.constI(0))
}

// subgraph runs fn with a new innermost graph seeing the current names.
func (x *exporter) subgraph(fn func(g *graph)) *graph {
	g := newGraph()
	for k, v := range x.inner().cur {
		g.cur[k] = v
	}
	x.stack = append(x.stack, g)
	fn(g)
	x.stack = x.stack[:len(x.stack)-1]
	return g
}

// output returns name as a graph output of g: an Identity is inserted when
// name is not defined by a node of g (a graph input, or an outer-scope
// name), or is already an output.
func (x *exporter) output(g *graph, name string, taken map[string]bool, base string) string {
	if !g.produced[name] || taken[name] {
		name = x.node("Identity", []string{name}, x.fresh(base))
	}
	taken[name] = true
	return name
}

func ids(set []bool) []int {
	var out []int
	for id, ok := range set {
		if ok {
			out = append(out, id)
		}
	}
	return out
}

// loop writes a For as an ONNX Loop: the trip count is the count (clamped
// at 0 unless it is a known constant), the iteration number is the index,
// and the values the body writes that are live at the loop's head are
// loop-carried. With checked arithmetic, the loop's condition stops it
// after the iteration in which the first failure happened.
func (x *exporter) loop(f *ir.For) {
	count := x.lookup(f.Count.ID)
	if v, ok := x.ints[count]; ok {
		count = x.constI(max(v, 0))
	} else {
		count = x.op("Max", "trip_count", nil, count, x.constI(0))
	}
	// Carried: written in the body and live at the loop's head.
	w := x.written(f.Body)
	head := x.liveHead[f]
	cond := x.noError()
	if cond == "" && w[x.errID] {
		cond = x.constant(&onnxpb.Tensor{DataType: onnxpb.TypeBool, RawData: []byte{1}}, "true")
	}
	var carried []int
	for _, id := range ids(w) {
		if head[id] && (f.Index == nil || id != f.Index.ID) {
			carried = append(carried, id)
		}
	}
	inputs := []string{count, cond}
	for _, id := range carried {
		inputs = append(inputs, x.lookup(id))
	}
	idxName := "iteration"
	if f.Index != nil {
		idxName = f.Index.Name
	}
	body := &onnxpb.Graph{Name: "loop_" + sanitize(idxName) + "_body", DocString: "for at " + f.Pos}
	g := x.subgraph(func(g *graph) {
		iter, condIn := x.fresh(idxName), x.fresh("cond")
		body.Input = append(body.Input, valueInfo(iter, ir.Type{DType: ir.Int64}), valueInfo(condIn, ir.Type{DType: ir.Bool}))
		if f.Index != nil {
			g.cur[f.Index.ID] = iter
		}
		for _, id := range carried {
			n := x.fresh(x.baseOf(id))
			g.cur[id] = n
			body.Input = append(body.Input, valueInfo(n, x.typeOf(id)))
		}
		x.body(f.Body)
		taken := map[string]bool{}
		condOut := ""
		if w[x.errID] {
			condOut = x.noError()
		}
		if condOut == "" {
			condOut = condIn
		}
		body.Output = append(body.Output, valueInfo(x.output(g, condOut, taken, "cond"), ir.Type{DType: ir.Bool}))
		for _, id := range carried {
			body.Output = append(body.Output, valueInfo(x.output(g, g.cur[id], taken, x.baseOf(id)), x.typeOf(id)))
		}
	})
	body.Node = g.nodes
	if len(carried) == 0 {
		// Nothing the body writes is read later: the loop has no effect
		// on the results and is left out (an ONNX node needs an output).
		return
	}
	outs := make([]string, len(carried))
	for i, id := range carried {
		outs[i] = x.dstName(f, id)
	}
	x.inner().add(&onnxpb.Node{OpType: "Loop", Input: inputs, Output: outs, Attribute: []*onnxpb.Attribute{attrGraph("body", body)}})
	for i, id := range carried {
		x.set(id, outs[i])
	}
}

// branch writes an If as an ONNX If whose outputs are the values either
// branch writes that are read afterwards; a branch that does not write
// one passes its current value through.
func (x *exporter) branch(in *ir.If) {
	cond := x.lookup(in.Cond.ID)
	wt, we := x.written(in.Then), x.written(in.Else)
	var outsIDs []int
	for id := range wt {
		if (wt[id] || we[id]) && x.liveOut[in][id] {
			outsIDs = append(outsIDs, id)
		}
	}
	// Values passed through must be named before the branches are built.
	for _, id := range outsIDs {
		if !wt[id] || !we[id] {
			x.lookup(id)
		}
	}
	mk := func(name string, body []ir.Instr) *onnxpb.Graph {
		out := &onnxpb.Graph{Name: name, DocString: name + " of if at " + in.Pos}
		g := x.subgraph(func(g *graph) {
			x.body(body)
			taken := map[string]bool{}
			for _, id := range outsIDs {
				out.Output = append(out.Output, valueInfo(x.output(g, g.cur[id], taken, x.baseOf(id)), x.typeOf(id)))
			}
		})
		out.Node = g.nodes
		return out
	}
	then := mk("then", in.Then)
	els := mk("else", in.Else)
	outs := make([]string, len(outsIDs))
	for i, id := range outsIDs {
		outs[i] = x.dstName(in, id)
	}
	if len(outs) == 0 {
		// Nothing the branches write is read later: the If has no effect
		// on the results and is left out (ONNX needs a node output).
		return
	}
	x.inner().add(&onnxpb.Node{OpType: "If", Input: []string{cond}, Output: outs,
		Attribute: []*onnxpb.Attribute{attrGraph("else_branch", els), attrGraph("then_branch", then)}})
	for i, id := range outsIDs {
		x.set(id, outs[i])
	}
}

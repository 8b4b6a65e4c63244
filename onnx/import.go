package onnx

import (
	"errors"
	"fmt"
	"go/format"
	"iter"
	"maps"
	"math"
	"math/bits"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// The opset versions of the default domain Import reads. The ops it
// supports have the same meaning across them, except where a version is
// named in docs/import.md (Softmax and LogSoftmax before 13, the axes of
// ReduceSum before 13 and of ReduceMean and ReduceMax from 18).
const (
	MinImportOpset = 7
	MaxImportOpset = 18
)

// ErrImport is the kind of every error Import returns for a model it
// cannot turn into a program; errors.As gives the *ImportError.
var ErrImport = errors.New("onnx import")

// The classes of an ImportError: why a model (or a node test) was not
// imported.
const (
	ClassModel   = "model"     // not a model Import reads: bytes, graph, model-local functions
	ClassOpset   = "opset"     // an opset of the default domain outside MinImportOpset to MaxImportOpset
	ClassOp      = "op"        // an op that has no rxeq form
	ClassDType   = "dtype"     // an element type other than float32 (tensors) and int64 (scalars)
	ClassRank    = "rank"      // a rank the op's rxeq form does not take (MatMul, Transpose), or above 4
	ClassAttr    = "attribute" // an attribute value the rxeq form does not have
	ClassShape   = "shape"     // a shape the language cannot express (keepdims ArgMax, a real Reshape)
	ClassControl = "control-flow"
)

// ImportError is an error of Import: the node it is about (empty for the
// model as a whole), its op, the class of the problem and the message.
type ImportError struct {
	Node, Op string
	Class    string
	Msg      string
}

func (e *ImportError) Error() string {
	if e.Op == "" {
		return "onnx import: " + e.Msg
	}
	return fmt.Sprintf("onnx import: node %q (%s): %s", e.Node, e.Op, e.Msg)
}

// Unwrap returns ErrImport.
func (e *ImportError) Unwrap() error { return ErrImport }

// ImportOptions configure Import.
type ImportOptions struct {
	// Func is the scoring function's name; default the graph's name made
	// an identifier ("score" when that is empty).
	Func string
	// Source is the model's path as the user named it, for the header.
	Source string
	// WeightsDir is where the caller writes Weights, for the header.
	WeightsDir string
	// Constants are values for graph inputs to fold into the program as
	// constants (by model name), as for an initializer: an int64 axes or
	// shape input, say, that the language needs to know. Those inputs
	// are not parameters.
	Constants map[string]*tensor.Tensor
}

// Binding pairs a name in the model with its name in the program.
type Binding struct{ Model, RX string }

// Imported is a model turned into an .rx program.
type Imported struct {
	Source []byte // the program, gofmt-formatted, checked as a scenario
	Func   string // its one function
	// Weights are the values of the parameters that stand for the
	// model's initializers (and tensor constants), by parameter name.
	Weights map[string]*tensor.Tensor
	// Inputs are the graph inputs (initializers excluded) and Outputs
	// the graph outputs, in the model's order, with their program names.
	// The rx_error output of a model rxeq exported is not among them.
	Inputs, Outputs []Binding
}

// SupportedOps returns the ONNX ops Import translates, sorted.
func SupportedOps() []string {
	ops := make([]string, 0, len(importOps))
	for k := range importOps {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	return ops
}

var importOps = map[string]bool{
	"Abs": true, "Add": true, "And": true, "ArgMax": true, "Cast": true, "Clip": true, "Constant": true, "Div": true,
	"Equal": true, "Exp": true, "Flatten": true, "Gemm": true, "Greater": true, "GreaterOrEqual": true,
	"Identity": true, "If": true, "LeakyRelu": true, "Less": true, "LessOrEqual": true, "Log": true, "LogSoftmax": true,
	"Loop": true, "MatMul": true, "Max": true, "Mean": true, "Min": true, "Mul": true, "Neg": true,
	"Not": true, "Or": true, "Reciprocal": true, "ReduceMax": true, "ReduceMean": true, "ReduceSum": true,
	"Relu": true, "Reshape": true, "Sigmoid": true, "Softmax": true, "Sqrt": true, "Squeeze": true,
	"Sub": true, "Sum": true, "Tanh": true, "Transpose": true, "Unsqueeze": true,
}

// Import turns an ONNX model into a readable .rx program with one scoring
// function: graph inputs become parameters with //rx:input generators
// from their dtype, initializers become parameters whose values are in
// Weights, graph outputs become results, each node the rxeq expression of
// the same meaning, Loop a for and If an if. A model rxeq exported comes
// back as the program it was exported from, its guarded checked
// arithmetic as CheckedDiv and CheckedRem and its rx_error output dropped
// (the program fails with the error itself). The result is checked with
// program.ParseScenario before it is returned; nothing partial is.
// docs/import.md has the op table and what is refused.
func Import(model []byte, opt ImportOptions) (imp *Imported, err error) {
	m, err := onnxpb.UnmarshalModel(model)
	if err != nil {
		return nil, &ImportError{Class: ClassModel, Msg: err.Error()}
	}
	x := &importer{m: m, opt: opt, prod: map[string]prodRef{}, bodyIn: map[string]bodyRef{}, graphOf: map[*onnxpb.Node]*onnxpb.Graph{},
		needed: map[string]bool{}, uses: map[string]int{}, useGraph: map[string]*onnxpb.Graph{}, names: map[string]bool{},
		inits: map[string]*onnxpb.Tensor{}, weights: map[string]*tensor.Tensor{}}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*ImportError)
			if !ok {
				panic(fmt.Sprintf("%v\n%s", r, debug.Stack()))
			}
			imp, err = nil, e
		}
	}()
	return x.run()
}

type prodRef struct {
	node *onnxpb.Node
	idx  int
}

type bodyRef struct {
	loop *onnxpb.Node
	idx  int
}

// val is the program's form of one ONNX value.
type val struct {
	t     ir.Type
	expr  string // "" for a constant not yet used as data
	prec  int    // Go precedence of expr: 7 primary, 6 unary, 5 * /, 4 + -, 3 comparison, 2 &&, 1 ||
	isVar bool   // expr is a variable (parameter, result or local)
	param bool
	konst *tensor.Tensor // the value, when known (Constant, initializer)
	kbool *bool
	lit   string // a literal rxeq's export recorded for the constant
	name  string // the ONNX name, for weights made from it
	dist  string // the //rx:input generator of a weight made from it ("": normal(0, 1))
	level int    // graph nesting level where it is defined
	nest  int    // how many inlined ops expr holds
	// checked: expr holds a CheckedDiv or CheckedRem, so where it is
	// evaluated matters; used: it has been read.
	checked, used bool
	result        bool
	alias         bool // another ONNX name's value (Identity, a no-op Cast or Reshape)
	local         bool // expr is a local variable the importer declared (not a parameter, result or index)
}

type scope struct {
	parent *scope
	vals   map[string]*val
	level  int
}

// inward yields the values in scope, the innermost scope's first and each
// scope's by name, so that a search over them is deterministic.
func (s *scope) inward() iter.Seq2[string, *val] {
	return func(yield func(string, *val) bool) {
		for ; s != nil; s = s.parent {
			for _, k := range slices.Sorted(maps.Keys(s.vals)) {
				if !yield(k, s.vals[k]) {
					return
				}
			}
		}
	}
}

func (s *scope) get(name string) *val {
	for ; s != nil; s = s.parent {
		if v, ok := s.vals[name]; ok {
			return v
		}
	}
	return nil
}

type rxParam struct {
	name string
	t    ir.Type
	dist string
}

type importer struct {
	m        *onnxpb.Model
	opt      ImportOptions
	opset    int64
	prod     map[string]prodRef
	bodyIn   map[string]bodyRef
	graphOf  map[*onnxpb.Node]*onnxpb.Graph
	needed   map[string]bool
	uses     map[string]int
	useGraph map[string]*onnxpb.Graph
	names    map[string]bool
	inits    map[string]*onnxpb.Tensor
	weights  map[string]*tensor.Tensor
	params   []rxParam
	results  map[string]string // graph output name -> result name
	resultT  map[string]ir.Type
	syms     map[string]string // dim_param -> program symbol
	lines    []string
	hasErr   bool // the model has rxeq's rx_error output
	// effectful are the Loop and If nodes whose subgraphs hold checked
	// arithmetic that can fail; pending the inlined values with checked
	// arithmetic not read yet.
	effectful map[*onnxpb.Node]bool
	readers   map[string][]*onnxpb.Node // the nodes that read each value
	owner     map[*onnxpb.Graph]*onnxpb.Node
	graphOuts map[string]bool // the outputs of every graph and subgraph
	pending   []*val
	cur       *onnxpb.Node
	onesOf    map[int]*val // the ones weights by rank (ones)
}

func (x *importer) fail(class, format string, args ...any) {
	e := &ImportError{Class: class, Msg: fmt.Sprintf(format, args...)}
	if x.cur != nil {
		e.Node, e.Op = x.cur.Name, x.cur.OpType
		if e.Node == "" && len(x.cur.Output) > 0 {
			e.Node = x.cur.Output[0]
		}
	}
	panic(e)
}

func (x *importer) emit(format string, args ...any) {
	x.flush()
	x.lines = append(x.lines, fmt.Sprintf(format, args...))
}

// flush declares the inlined values with checked arithmetic that nothing
// has read yet, so that they are evaluated where the model evaluates
// them, before the statement that comes next.
func (x *importer) flush() {
	p := x.pending
	x.pending = nil
	for _, v := range p {
		if v.used {
			continue
		}
		name := x.newName(v.name)
		x.lines = append(x.lines, name+" := "+v.expr)
		v.expr, v.prec, v.isVar, v.checked, v.nest, v.local = name, 7, true, false, 0, true
	}
}

func (x *importer) run() (*Imported, error) {
	m := x.m
	if m.Graph == nil {
		x.fail(ClassModel, "the model has no graph")
	}
	if len(m.Unsupported) > 0 {
		x.fail(ClassModel, "the model has training info or model-local functions (fields %v), which Import does not read", m.Unsupported)
	}
	for _, o := range m.OpsetImport {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			x.opset = o.Version
		}
	}
	if x.opset < MinImportOpset || x.opset > MaxImportOpset {
		x.fail(ClassOpset, "opset %d of the default domain: Import reads opsets %d to %d", x.opset, MinImportOpset, MaxImportOpset)
	}
	g := m.Graph
	x.index(g)
	for _, t := range g.Initializer {
		x.inits[t.Name] = t
	}
	for _, o := range g.Output {
		if o.Name == ErrorOutput && elemTypeOf(o) == onnxpb.TypeInt64 {
			x.hasErr = true
		}
	}
	// Names: the function, then parameters and results.
	for _, w := range reserved {
		x.names[w] = true
	}
	fn := x.opt.Func
	if fn == "" {
		fn = identifier(g.Name)
		if fn == "v" || fn == "" {
			fn = "score"
		}
	} else if !isIdent(fn) {
		return nil, &ImportError{Class: ClassModel, Msg: fmt.Sprintf("function name %q is not an identifier", fn)}
	}
	x.names[fn] = true
	top := &scope{vals: map[string]*val{}}
	x.syms = map[string]string{}
	imp := &Imported{Func: fn, Weights: x.weights}
	for _, in := range g.Input {
		if _, ok := x.inits[in.Name]; ok {
			continue // an initializer listed as an input (IR < 4): a weight
		}
		if k, ok := x.opt.Constants[in.Name]; ok {
			top.vals[in.Name] = &val{t: typeOfTensor(k), konst: k, name: in.Name, prec: 7}
			continue
		}
		x.cur = firstReader(g, in.Name) // an input refused is the first op's that reads it
		t := x.inputType(in)
		x.cur = nil
		name := x.newName(in.Name)
		dist := "normal(0, 1)"
		if t.DType == ir.Int64 {
			dist = "const(1)"
		}
		x.params = append(x.params, rxParam{name: name, t: t, dist: dist})
		top.vals[in.Name] = &val{t: t, expr: name, prec: 7, isVar: true, param: true}
		imp.Inputs = append(imp.Inputs, Binding{Model: in.Name, RX: name})
	}
	for name, t := range x.inits {
		kt, err := x.tensorOf(t)
		if err != nil {
			continue // refused if it is used as data
		}
		top.vals[name] = &val{t: typeOfTensor(kt), konst: kt, name: name, prec: 7}
	}
	x.results, x.resultT = map[string]string{}, map[string]ir.Type{}
	var outs []*onnxpb.ValueInfo
	for _, o := range g.Output {
		if x.hasErr && o.Name == ErrorOutput {
			continue
		}
		outs = append(outs, o)
		if _, dup := x.results[o.Name]; dup {
			x.fail(ClassModel, "graph output %q is listed twice", o.Name)
		}
		x.results[o.Name] = x.newName(o.Name)
		imp.Outputs = append(imp.Outputs, Binding{Model: o.Name, RX: x.results[o.Name]})
	}
	if len(outs) == 0 {
		x.fail(ClassModel, "the graph has no outputs")
	}
	for _, o := range outs {
		x.mark(o.Name)
	}
	x.effectful = map[*onnxpb.Node]bool{}
	x.markEffects(g)
	x.countUses(g)
	for _, o := range outs {
		x.use(o.Name, g)
	}
	x.graph(g, top)
	x.cur = nil
	for _, o := range outs {
		v := top.get(o.Name)
		if v == nil {
			x.fail(ClassModel, "graph output %q is not computed by the graph", o.Name)
		}
		if !v.result {
			v = x.data(v)
			x.emit("%s = %s", x.results[o.Name], v.expr)
		}
		x.resultT[o.Name] = v.t
	}
	x.flush()
	src, err := x.program(fn, outs)
	if err != nil {
		return nil, err
	}
	imp.Source = src
	return imp, nil
}

// reserved are names the program cannot give a variable.
var reserved = []string{
	"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go", "goto",
	"if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch", "type", "var",
	"true", "false", "nil", "iota", "bool", "int", "int32", "int64", "float32", "float64", "string", "byte", "rune", "uint",
	"uint8", "uint32", "uint64", "int8", "int16", "uint16", "complex64", "complex128", "uintptr", "error", "any",
	"append", "cap", "len", "make", "new", "panic", "print", "println", "recover", "copy", "delete", "close", "min", "max", "clear",
	"MatMul", "Transpose", "Tanh", "Exp", "Log", "Sigmoid", "Relu", "Abs", "Sqrt", "Maximum", "Minimum", "Softmax",
	"LogSoftmax", "Sum", "Mean", "Max", "Argmax", "CheckedRem", "CheckedDiv", "B", "_",
}

var exportedName = regexp.MustCompile(`^rx_(?:v|p|r)[0-9]+_?`)

// identifier turns an ONNX name into an identifier: the name an rxeq
// export gave it (rx_v12_logits is logits), its letters, digits and
// underscores otherwise.
func identifier(s string) string {
	s = exportedName.ReplaceAllString(s, "")
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		switch {
		case ok:
			if b.Len() == 0 && r >= '0' && r <= '9' {
				b.WriteString("v")
			}
			b.WriteRune(r)
			under = false
		case b.Len() > 0 && !under:
			b.WriteByte('_')
			under = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	out := strings.TrimRight(b.String(), "_")
	if out == "" {
		return "v"
	}
	return out
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// newName returns a program name for an ONNX name, unique in the program.
func (x *importer) newName(onnxName string) string {
	base := identifier(onnxName)
	name := base
	for i := 2; x.names[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	x.names[name] = true
	return name
}

// index records every node's graph and producer, and the Loop bodies'
// inputs, through every subgraph.
func (x *importer) index(g *onnxpb.Graph) {
	if x.readers == nil {
		x.readers, x.owner, x.graphOuts = map[string][]*onnxpb.Node{}, map[*onnxpb.Graph]*onnxpb.Node{}, map[string]bool{}
	}
	for _, o := range g.Output {
		x.graphOuts[o.Name] = true
	}
	for _, n := range g.Node {
		x.graphOf[n] = g
		for _, in := range n.Input {
			x.readers[in] = append(x.readers[in], n)
		}
		for i, o := range n.Output {
			if o != "" {
				x.prod[o] = prodRef{n, i}
			}
		}
		for _, a := range n.Attribute {
			if a.G != nil {
				x.owner[a.G] = n
				x.index(a.G)
				if n.OpType == "Loop" && a.Name == "body" {
					for i, in := range a.G.Input {
						x.bodyIn[in.Name] = bodyRef{n, i}
					}
				}
			}
			for _, sg := range a.Graphs {
				x.index(sg)
			}
		}
	}
}

func attr(n *onnxpb.Node, name string) *onnxpb.Attribute {
	for _, a := range n.Attribute {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func attrI(n *onnxpb.Node, name string, def int64) int64 {
	if a := attr(n, name); a != nil {
		return a.I
	}
	return def
}

func attrF(n *onnxpb.Node, name string, def float32) float32 {
	if a := attr(n, name); a != nil {
		return a.F
	}
	return def
}

func subgraph(n *onnxpb.Node, name string) *onnxpb.Graph {
	if a := attr(n, name); a != nil {
		return a.G
	}
	return nil
}

// producerOp returns the node producing name, or nil.
func (x *importer) producer(name string) *onnxpb.Node {
	if p, ok := x.prod[name]; ok {
		return p.node
	}
	return nil
}

// constInt returns the int64 scalar value of a Constant node's output.
func (x *importer) constInt(name string) (int64, bool) {
	n := x.producer(name)
	if n == nil || n.OpType != "Constant" {
		return 0, false
	}
	a := attr(n, "value")
	if a == nil || a.T == nil || len(a.T.Dims) != 0 {
		if a = attr(n, "value_int"); a != nil {
			return a.I, true
		}
		return 0, false
	}
	v, err := a.T.Int64s(1)
	if err != nil || len(v) != 1 {
		return 0, false
	}
	return v[0], true
}

// unwhere returns b for rxeq's guarded divisor Where(bad, 1, b), and s
// itself for anything else.
func (x *importer) unwhere(s string) string {
	n := x.producer(s)
	if n != nil && n.OpType == "Where" && len(n.Input) == 3 {
		if one, ok := x.constInt(n.Input[1]); ok && one == 1 {
			return n.Input[2]
		}
	}
	return s
}

// remainder matches rxeq's remainder a - Div(a, s) * s (s a guarded
// divisor or an int64 constant) and returns a and the divisor.
func (x *importer) remainder(n *onnxpb.Node) (a, b string, ok bool) {
	if n.OpType != "Sub" || len(n.Input) != 2 {
		return "", "", false
	}
	mul := x.producer(n.Input[1])
	if mul == nil || mul.OpType != "Mul" || len(mul.Input) != 2 {
		return "", "", false
	}
	div := x.producer(mul.Input[0])
	if div == nil || div.OpType != "Div" || len(div.Input) != 2 || div.Input[0] != n.Input[0] || div.Input[1] != mul.Input[1] {
		return "", "", false
	}
	s := div.Input[1]
	if u := x.unwhere(s); u != s {
		return n.Input[0], u, true
	}
	if _, isConst := x.constInt(s); isConst {
		return n.Input[0], s, true
	}
	return "", "", false
}

// tripCount returns what a Loop's trip count reads: p for rxeq's
// Max(p, 0).
func (x *importer) tripCount(name string) string {
	n := x.producer(name)
	if n != nil && n.OpType == "Max" && len(n.Input) == 2 {
		if z, ok := x.constInt(n.Input[1]); ok && z == 0 {
			return n.Input[0]
		}
	}
	return name
}

// effect reports whether n is checked arithmetic of rxeq's that can fail
// (its divisor guarded with Where), in a model with the rx_error output.
func (x *importer) effect(n *onnxpb.Node) bool {
	if !x.hasErr || len(n.Input) != 2 {
		return false
	}
	switch n.OpType {
	case "Div":
		if x.unwhere(n.Input[1]) == n.Input[1] {
			return false
		}
		// The quotient inside rxeq's remainder is the remainder's.
		for _, mul := range x.readers[n.Output[0]] {
			for _, sub := range x.readers[mul.Output[0]] {
				if _, _, ok := x.remainder(sub); ok && mul.OpType == "Mul" {
					return false
				}
			}
		}
		return true
	case "Sub":
		_, _, ok := x.remainder(n)
		return ok && x.guarded(n)
	}
	return false
}

// guarded reports whether a remainder's divisor is rxeq's guarded one.
func (x *importer) guarded(n *onnxpb.Node) bool {
	mul := x.producer(n.Input[1])
	return mul != nil && len(mul.Input) == 2 && x.unwhere(mul.Input[1]) != mul.Input[1]
}

// markEffects marks what the checked arithmetic that can fail reads, and
// the Loop and If nodes that hold some, as needed; it reports whether g
// holds any.
func (x *importer) markEffects(g *onnxpb.Graph) bool {
	any := false
	for _, n := range g.Node {
		if x.effect(n) {
			any = true
			for _, d := range x.deps(n) {
				x.mark(d)
			}
		}
		inner := false
		for _, a := range n.Attribute {
			if a.G != nil && x.markEffects(a.G) {
				inner = true
			}
		}
		if inner && (n.OpType == "Loop" || n.OpType == "If") && len(n.Input) > 0 {
			any = true
			x.effectful[n] = true
			if n.OpType == "Loop" {
				x.mark(x.tripCount(n.Input[0]))
			} else {
				x.mark(n.Input[0])
			}
		}
	}
	return any
}

// deps returns the values a node's translation reads (for an output k of
// Loop and If: see mark).
func (x *importer) deps(n *onnxpb.Node) []string {
	switch n.OpType {
	case "Div":
		if len(n.Input) == 2 {
			return []string{n.Input[0], x.unwhere(n.Input[1])}
		}
	case "Sub":
		if a, b, ok := x.remainder(n); ok {
			return []string{a, b}
		}
	case "Loop", "If":
		return nil
	}
	var out []string
	for _, in := range n.Input {
		if in != "" {
			out = append(out, in)
		}
	}
	return out
}

// mark marks name and everything its value is computed from as needed.
func (x *importer) mark(name string) {
	work := []string{name}
	for len(work) > 0 {
		name := work[len(work)-1]
		work = work[:len(work)-1]
		if name == "" || x.needed[name] {
			continue
		}
		x.needed[name] = true
		if b, ok := x.bodyIn[name]; ok && b.idx >= 2 {
			body := subgraph(b.loop, "body")
			k := b.idx - 2
			if k < len(b.loop.Input)-2 && k+1 < len(body.Output) {
				work = append(work, b.loop.Input[b.idx], body.Output[k+1].Name)
			}
			continue
		}
		p, ok := x.prod[name]
		if !ok {
			continue
		}
		n := p.node
		switch n.OpType {
		case "Loop":
			body := subgraph(n, "body")
			if body == nil || len(n.Input) < 2 {
				continue
			}
			work = append(work, x.tripCount(n.Input[0]))
			if p.idx+2 < len(n.Input) && p.idx+1 < len(body.Output) {
				work = append(work, n.Input[p.idx+2], body.Output[p.idx+1].Name)
			}
		case "If":
			work = append(work, n.Input...)
			for _, br := range []string{"then_branch", "else_branch"} {
				if g := subgraph(n, br); g != nil && p.idx < len(g.Output) {
					work = append(work, g.Output[p.idx].Name)
				}
			}
		default:
			work = append(work, x.deps(n)...)
		}
	}
}

// use counts one read of name from graph g.
func (x *importer) use(name string, g *onnxpb.Graph) {
	x.uses[name]++
	if prev, ok := x.useGraph[name]; ok && prev != g {
		x.uses[name] += 100 // read from two graphs: never inlined
	}
	x.useGraph[name] = g
}

// countUses counts the reads of every value by the needed nodes.
func (x *importer) countUses(g *onnxpb.Graph) {
	for _, n := range g.Node {
		if !x.nodeNeeded(n) && !x.effectful[n] && !x.effect(n) {
			continue
		}
		switch n.OpType {
		case "Loop":
			body := subgraph(n, "body")
			x.use(x.tripCount(n.Input[0]), g)
			for k := 0; k+2 < len(n.Input); k++ {
				if x.carried(n, k) {
					x.use(n.Input[k+2], g)
					x.use(body.Output[k+1].Name, body)
				}
			}
			x.countUses(body)
		case "If":
			x.use(n.Input[0], g)
			for _, br := range []string{"then_branch", "else_branch"} {
				sg := subgraph(n, br)
				if sg == nil {
					continue
				}
				for k, o := range n.Output {
					if x.needed[o] && k < len(sg.Output) {
						x.use(sg.Output[k].Name, sg)
					}
				}
				x.countUses(sg)
			}
		default:
			for _, d := range x.deps(n) {
				x.use(d, g)
			}
		}
	}
}

// carried reports whether Loop n's k-th loop-carried value is needed.
func (x *importer) carried(n *onnxpb.Node, k int) bool {
	body := subgraph(n, "body")
	if body == nil || k+2 >= len(body.Input) {
		return false
	}
	return (k < len(n.Output) && x.needed[n.Output[k]]) || x.needed[body.Input[k+2].Name]
}

func (x *importer) nodeNeeded(n *onnxpb.Node) bool {
	for _, o := range n.Output {
		if x.needed[o] {
			return true
		}
	}
	return false
}

// firstReader returns the first node of g that reads name, or nil.
func firstReader(g *onnxpb.Graph, name string) *onnxpb.Node {
	for _, n := range g.Node {
		if slices.Contains(n.Input, name) {
			return n
		}
	}
	return nil
}

// inputType is the program type of a graph input.
func (x *importer) inputType(in *onnxpb.ValueInfo) ir.Type {
	if in.Type == nil || in.Type.Tensor == nil || len(in.Type.Unsupported) > 0 {
		x.fail(ClassDType, "graph input %q is not a tensor", in.Name)
	}
	tt := in.Type.Tensor
	var t ir.Type
	switch tt.ElemType {
	case onnxpb.TypeFloat:
		t.DType = ir.Float32
	case onnxpb.TypeInt64:
		t.DType = ir.Int64
	default:
		x.fail(ClassDType, "graph input %q has element type %s: rxeq programs take float32 tensors and int64 scalars", in.Name, typeName(tt.ElemType))
	}
	if tt.Shape == nil {
		x.fail(ClassShape, "graph input %q has no shape: its rank must be known", in.Name)
	}
	if len(tt.Shape.Dim) > 4 {
		x.fail(ClassRank, "graph input %q has rank %d: rxeq tensors have rank 0 to 4", in.Name, len(tt.Shape.Dim))
	}
	if t.DType == ir.Int64 && len(tt.Shape.Dim) > 0 {
		x.fail(ClassDType, "graph input %q is an int64 tensor of rank %d: rxeq programs take int64 scalars only", in.Name, len(tt.Shape.Dim))
	}
	for i, d := range tt.Shape.Dim {
		switch {
		case d.HasValue && d.Value > 0:
			t.Shape = append(t.Shape, ir.Dim{Size: d.Value})
		case d.HasValue:
			x.fail(ClassShape, "graph input %q has dimension %d of size %d: rxeq dimensions are positive", in.Name, i, d.Value)
		default:
			key := d.Param
			if key == "" {
				key = fmt.Sprintf("?%s.%d", in.Name, i)
			}
			sym, ok := x.syms[key]
			if !ok {
				if len(x.syms) > 0 {
					x.fail(ClassShape, "graph input %q has a second symbolic dimension (%q at %d): rxeq binds only the batch dimension B", in.Name, d.Param, i)
				}
				sym = "B"
				x.syms[key] = sym
			}
			t.Shape = append(t.Shape, ir.Dim{Sym: sym})
		}
	}
	return t
}

func elemTypeOf(v *onnxpb.ValueInfo) int32 {
	if v.Type == nil || v.Type.Tensor == nil {
		return 0
	}
	return v.Type.Tensor.ElemType
}

func typeName(t int32) string {
	names := map[int32]string{onnxpb.TypeFloat: "FLOAT", onnxpb.TypeUint8: "UINT8", onnxpb.TypeInt8: "INT8", onnxpb.TypeUint16: "UINT16",
		onnxpb.TypeInt16: "INT16", onnxpb.TypeInt32: "INT32", onnxpb.TypeInt64: "INT64", onnxpb.TypeString: "STRING", onnxpb.TypeBool: "BOOL",
		onnxpb.TypeFloat16: "FLOAT16", onnxpb.TypeDouble: "DOUBLE", onnxpb.TypeUint32: "UINT32", onnxpb.TypeUint64: "UINT64",
		onnxpb.TypeBFloat16: "BFLOAT16"}
	if s, ok := names[t]; ok {
		return s
	}
	return fmt.Sprintf("type %d", t)
}

// tensorOf reads a TensorProto of type FLOAT, INT64 or BOOL.
func (x *importer) tensorOf(t *onnxpb.Tensor) (*tensor.Tensor, error) {
	shape := make([]int, len(t.Dims))
	for i, d := range t.Dims {
		shape[i] = int(d)
	}
	switch t.DataType {
	case onnxpb.TypeFloat:
		v, err := t.Float32s(tensor.MaxElements)
		if err != nil {
			return nil, err
		}
		return tensor.FromFloat32(v, shape...), nil
	case onnxpb.TypeInt64:
		v, err := t.Int64s(tensor.MaxElements)
		if err != nil {
			return nil, err
		}
		return tensor.FromInt64(v, shape...), nil
	}
	return nil, fmt.Errorf("%w %q: element type %s", onnxpb.ErrTensor, t.Name, typeName(t.DataType))
}

func typeOfTensor(t *tensor.Tensor) ir.Type {
	out := ir.Type{DType: ir.Float32}
	if t.DType == tensor.Int64 {
		out.DType = ir.Int64
	}
	for _, d := range t.Shape {
		out.Shape = append(out.Shape, ir.Dim{Size: int64(d)})
	}
	return out
}

// get returns the value of name in scope, failing when the graph has none.
func (x *importer) get(name string, sc *scope) *val {
	v := sc.get(name)
	if v == nil {
		x.fail(ClassModel, "input %q is not defined before the node", name)
	}
	return v
}

// data returns v as a value an expression reads: a constant becomes a
// literal (a scalar) or a parameter whose value is a weight.
func (x *importer) data(v *val) *val {
	v.used = true
	if v.expr != "" {
		return v
	}
	if v.konst == nil {
		x.fail(ClassModel, "a value has no program form")
	}
	k := v.konst
	if k.Rank() == 0 {
		if k.DType == tensor.Int64 {
			v.expr, v.prec = intLit(k.I64[0])
			return v
		}
		s, ok := floatLit(k.F32[0])
		if v.lit != "" {
			s, ok = v.lit, true
		}
		if ok {
			v.expr, v.prec = s, 7
			if strings.HasPrefix(s, "-") {
				v.prec = 6
			}
			return v
		}
	}
	if k.DType != tensor.Float32 {
		x.fail(ClassDType, "the int64 tensor %q of shape %v is read as data: rxeq programs take int64 scalars only", v.name, k.Shape)
	}
	if k.Rank() > 4 {
		x.fail(ClassRank, "the constant %q has rank %d: rxeq tensors have rank 0 to 4", v.name, k.Rank())
	}
	for _, d := range k.Shape {
		if d == 0 {
			x.fail(ClassShape, "the constant %q has an empty dimension (shape %v)", v.name, k.Shape)
		}
	}
	name := x.newName(v.name)
	dist := "normal(0, 1)"
	if v.dist != "" {
		dist = v.dist
	}
	x.params = append(x.params, rxParam{name: name, t: v.t, dist: dist})
	x.weights[name] = k
	v.expr, v.prec, v.isVar, v.param = name, 7, true, true
	return v
}

func intLit(i int64) (string, int) {
	if i == math.MinInt64 {
		return "(-9223372036854775807 - 1)", 7
	}
	if i < 0 {
		return strconv.FormatInt(i, 10), 6
	}
	return strconv.FormatInt(i, 10), 7
}

// floatLit is a literal for the float32 value f: its exact value when
// its significand has at most 12 significant bits (0.5, 2^-26), and
// otherwise the shortest decimal that rounds to f (0.1 for
// 0.100000001490116…), so that the literals of a program rxeq exported
// come back as they were written. NaN and the infinities have none.
func floatLit(f float32) (string, bool) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return "", false
	}
	var s string
	if mant := math.Float32bits(f) & (1<<23 - 1); mant == 0 || 24-bits.TrailingZeros32(mant) <= 12 {
		s = strconv.FormatFloat(float64(f), 'g', -1, 64)
	} else {
		s = strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s, true
}

// paren returns v's expression as an operand that needs precedence p.
func paren(v *val, p int) string {
	if v.prec < p {
		return "(" + v.expr + ")"
	}
	return v.expr
}

func (x *importer) binary(a *val, op string, p int, b *val, t ir.Type) *val {
	a, b = x.data(a), x.data(b)
	rhs := paren(b, p+1)
	return &val{t: t, expr: paren(a, p) + " " + op + " " + rhs, prec: p, nest: a.nest + b.nest + 1, checked: a.checked || b.checked}
}

func (x *importer) call(fn string, t ir.Type, args ...any) *val {
	parts := make([]string, len(args))
	nest := 1
	checked := fn == "CheckedDiv" || fn == "CheckedRem"
	for i, a := range args {
		switch a := a.(type) {
		case *val:
			a = x.data(a)
			parts[i] = a.expr
			nest += a.nest
			checked = checked || a.checked
		case int:
			parts[i] = strconv.Itoa(a)
		case bool:
			parts[i] = strconv.FormatBool(a)
		}
	}
	return &val{t: t, expr: fn + "(" + strings.Join(parts, ", ") + ")", prec: 7, nest: nest, checked: checked}
}

func (x *importer) unary(op string, a *val, t ir.Type) *val {
	a = x.data(a)
	s := paren(a, 6)
	if strings.HasPrefix(s, op) {
		s = "(" + s + ")"
	}
	return &val{t: t, expr: op + s, prec: 6, nest: a.nest + 1, checked: a.checked}
}

// graph translates the needed nodes of g, in order, into statements.
func (x *importer) graph(g *onnxpb.Graph, sc *scope) {
	for _, n := range g.Node {
		if !x.nodeNeeded(n) && !x.effectful[n] && !x.effect(n) {
			continue
		}
		x.cur = n
		if n.Domain != "" && n.Domain != "ai.onnx" {
			x.fail(ClassOp, "op of domain %q: Import reads the default domain only; supported ops: %s", n.Domain, strings.Join(SupportedOps(), ", "))
		}
		switch n.OpType {
		case "Loop":
			x.loop(n, g, sc)
			continue
		case "If":
			x.branch(n, g, sc)
			continue
		}
		if !importOps[n.OpType] {
			x.fail(ClassOp, "op %s has no rxeq form; supported ops: %s", n.OpType, strings.Join(SupportedOps(), ", "))
		}
		v := x.node(n, sc)
		if !x.nodeNeeded(n) {
			// Checked arithmetic whose value nothing reads but whose
			// failure is the model's error: it is evaluated all the same.
			// (_ = CheckedDiv(a, b), as Go evaluates it for its effect).
			x.emit("_ = %s", v.expr)
			continue
		}
		x.bind(n.Output[0], v, g, sc)
	}
}

// bind gives the value of ONNX name: a result is assigned, a value read
// once in the same graph stays an expression, anything else a variable.
func (x *importer) bind(name string, v *val, g *onnxpb.Graph, sc *scope) {
	if !v.alias {
		v.level = sc.level
	}
	if v.t.Rank() > 4 {
		x.fail(ClassRank, "the result %q has rank %d: rxeq tensors have rank 0 to 4", name, v.t.Rank())
	}
	if r, ok := x.results[name]; ok && sc.level == 0 {
		v = x.data(v)
		if v.t.DType == ir.Bool {
			x.fail(ClassDType, "graph output %q is a BOOL: rxeq results are float32 or int64", name)
		}
		x.emit("%s = %s", r, v.expr)
		sc.vals[name] = &val{t: v.t, expr: r, prec: 7, isVar: true, result: true, level: 0}
		return
	}
	if v.t.DType == ir.Bool || v.konst != nil && v.expr == "" || v.isVar {
		sc.vals[name] = v
		return
	}
	if x.uses[name] == 1 && x.useGraph[name] == g && v.nest <= 6 {
		sc.vals[name] = v
		if v.checked {
			v.name = name
			x.pending = append(x.pending, v)
		}
		return
	}
	n := x.newName(name)
	x.emit("%s := %s", n, v.expr)
	sc.vals[name] = &val{t: v.t, expr: n, prec: 7, isVar: true, level: sc.level, local: true}
}

func scalar(d ir.DType) ir.Type { return ir.Type{DType: d} }

func (x *importer) input(n *onnxpb.Node, i int, sc *scope) *val {
	if i >= len(n.Input) || n.Input[i] == "" {
		x.fail(ClassModel, "input %d is missing", i)
	}
	return x.get(n.Input[i], sc)
}

func (x *importer) floatIn(n *onnxpb.Node, i int, sc *scope) *val {
	v := x.input(n, i, sc)
	if v.t.DType != ir.Float32 {
		x.fail(ClassDType, "input %d is %s: the op's rxeq form takes float32", i, v.t.DType)
	}
	return v
}

// axis normalizes an axis attribute for a rank.
func (x *importer) axis(a int64, rank int) int {
	if a < -int64(rank) || a >= int64(rank) || rank == 0 && a != 0 {
		x.fail(ClassAttr, "axis %d is out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a)
}

// konstInts returns the int64 values of a constant input (axes, shape).
func (x *importer) konstInts(n *onnxpb.Node, i int, sc *scope) []int64 {
	v := x.input(n, i, sc)
	if v.konst == nil || v.konst.DType != tensor.Int64 {
		x.fail(ClassAttr, "input %d (%s) must be an int64 constant", i, n.Input[i])
	}
	return v.konst.I64
}

func sameShape(a, b []ir.Dim) bool { return slices.Equal(a, b) }

// broadcast is NumPy's broadcast of two shapes, as the checker unifies.
func (x *importer) broadcast(a, b []ir.Dim) []ir.Dim {
	r := max(len(a), len(b))
	out := make([]ir.Dim, r)
	for i := 1; i <= r; i++ {
		da, db := ir.Dim{Size: 1}, ir.Dim{Size: 1}
		if i <= len(a) {
			da = a[len(a)-i]
		}
		if i <= len(b) {
			db = b[len(b)-i]
		}
		switch {
		case da == db || db == ir.Dim{Size: 1}:
			out[r-i] = da
		case da == ir.Dim{Size: 1}:
			out[r-i] = db
		case da.IsSym():
			out[r-i] = db
		case db.IsSym():
			out[r-i] = da
		default:
			x.fail(ClassShape, "shapes %v and %v do not broadcast", a, b)
		}
	}
	return out
}

var floatOps = map[string]struct {
	op   string
	prec int
}{"Add": {"+", 4}, "Sub": {"-", 4}, "Mul": {"*", 5}, "Div": {"/", 5}}

var unaryCalls = map[string]string{"Tanh": "Tanh", "Exp": "Exp", "Log": "Log", "Sigmoid": "Sigmoid", "Relu": "Relu", "Abs": "Abs", "Sqrt": "Sqrt"}

var compares = map[string]string{"Equal": "==", "Less": "<", "LessOrEqual": "<=", "Greater": ">", "GreaterOrEqual": ">="}

// node translates a single-output op.
func (x *importer) node(n *onnxpb.Node, sc *scope) *val {
	if len(n.Output) != 1 {
		x.fail(ClassOp, "%d outputs: the op's rxeq form has one", len(n.Output))
	}
	op := n.OpType
	switch op {
	case "Constant":
		return x.constant(n)
	case "Identity":
		return passThrough(x.input(n, 0, sc))
	case "Cast":
		v := x.input(n, 0, sc)
		to := attrI(n, "to", 0)
		if want := map[ir.DType]int64{ir.Float32: onnxpb.TypeFloat, ir.Int64: onnxpb.TypeInt64, ir.Bool: onnxpb.TypeBool}[v.t.DType]; to != want {
			x.fail(ClassDType, "a Cast from %s to %s is not a no-op: Import takes Cast only to the same type", v.t.DType, typeName(int32(to)))
		}
		return passThrough(v)
	case "Add", "Sub", "Mul", "Div":
		if op == "Div" || op == "Sub" {
			if r := x.checkedOp(n, sc); r != nil {
				return r
			}
		}
		a, b := x.input(n, 0, sc), x.input(n, 1, sc)
		if a.t.DType != b.t.DType {
			x.fail(ClassDType, "operands of types %s and %s", a.t.DType, b.t.DType)
		}
		switch a.t.DType {
		case ir.Float32:
			return x.binary(a, floatOps[op].op, floatOps[op].prec, b, ir.Type{DType: ir.Float32, Shape: x.broadcast(a.t.Shape, b.t.Shape)})
		case ir.Int64:
			if a.t.Rank() != 0 || b.t.Rank() != 0 {
				x.fail(ClassDType, "int64 tensors of shapes %v and %v: rxeq's int64 arithmetic is on scalars", a.t.Shape, b.t.Shape)
			}
			return x.binary(a, floatOps[op].op, floatOps[op].prec, b, scalar(ir.Int64))
		}
		x.fail(ClassDType, "operands of type %s", a.t.DType)
	case "Sum", "Mean", "Max", "Min":
		if len(n.Input) == 0 {
			x.fail(ClassModel, "no inputs")
		}
		acc := x.floatIn(n, 0, sc)
		for i := 1; i < len(n.Input); i++ {
			b := x.floatIn(n, i, sc)
			t := ir.Type{DType: ir.Float32, Shape: x.broadcast(acc.t.Shape, b.t.Shape)}
			switch op {
			case "Sum", "Mean":
				acc = x.binary(acc, "+", 4, b, t)
			case "Max":
				acc = x.call("Maximum", t, acc, b)
			case "Min":
				acc = x.call("Minimum", t, acc, b)
			}
		}
		if op == "Mean" && len(n.Input) > 1 {
			acc = x.binary(acc, "/", 5, &val{expr: strconv.Itoa(len(n.Input)) + ".0", prec: 7}, acc.t)
		}
		if len(n.Input) == 1 {
			return passThrough(acc)
		}
		return acc
	case "Neg":
		a := x.input(n, 0, sc)
		if a.t.DType == ir.Int64 && a.t.Rank() != 0 || a.t.DType == ir.Bool {
			x.fail(ClassDType, "Neg of %s", a.t)
		}
		return x.unary("-", a, a.t)
	case "Reciprocal":
		a := x.floatIn(n, 0, sc)
		return x.binary(&val{expr: "1.0", prec: 7}, "/", 5, a, a.t)
	case "Tanh", "Exp", "Log", "Sigmoid", "Relu", "Abs", "Sqrt":
		a := x.floatIn(n, 0, sc)
		return x.call(unaryCalls[op], a.t, a)
	case "Clip":
		// min(max(x, lo), hi), as ONNX defines it; an absent bound is none.
		out := x.floatIn(n, 0, sc)
		lo, hi := attr(n, "min"), attr(n, "max")
		for i, fn := range []string{"Maximum", "Minimum"} {
			var bound *val
			switch {
			case x.opset < 11 && i == 0 && lo != nil:
				bound = &val{t: scalar(ir.Float32), konst: tensor.FromFloat32([]float32{lo.F}), name: "min"}
			case x.opset < 11 && i == 1 && hi != nil:
				bound = &val{t: scalar(ir.Float32), konst: tensor.FromFloat32([]float32{hi.F}), name: "max"}
			case x.opset >= 11 && len(n.Input) > i+1 && n.Input[i+1] != "":
				bound = x.floatIn(n, i+1, sc)
				if bound.t.Rank() != 0 {
					x.fail(ClassShape, "a Clip bound of shape %v: ONNX's bounds are scalars", bound.t.Shape)
				}
			}
			if bound != nil {
				out = x.call(fn, out.t, out, bound)
			}
		}
		if out.expr == x.input(n, 0, sc).expr {
			return passThrough(out)
		}
		return out
	case "LeakyRelu":
		a := x.floatIn(n, 0, sc)
		alpha := attrF(n, "alpha", 0.01)
		lit, ok := floatLit(alpha)
		if !ok || alpha <= 0 || alpha >= 1 {
			x.fail(ClassAttr, "LeakyRelu with alpha %v: translated as Maximum(x, alpha*x), which holds for 0 < alpha < 1", alpha)
		}
		return x.call("Maximum", a.t, a, x.binary(&val{expr: lit, prec: 7}, "*", 5, a, a.t))
	case "MatMul":
		a, b := x.floatIn(n, 0, sc), x.floatIn(n, 1, sc)
		if a.t.Rank() != 2 || b.t.Rank() != 2 {
			if a.t.Rank() > 2 || b.t.Rank() > 2 {
				x.fail(ClassRank, "MatMul of ranks %d and %d: rxeq's MatMul takes two rank-2 tensors; a batched MatMul (rank above 2) has no rxeq form: "+
					"the language has no op that multiplies stacks of matrices, and no reshape to write one with", a.t.Rank(), b.t.Rank())
			}
			x.fail(ClassRank, "MatMul of ranks %d and %d: rxeq's MatMul takes two rank-2 tensors", a.t.Rank(), b.t.Rank())
		}
		return x.call("MatMul", ir.Type{DType: ir.Float32, Shape: []ir.Dim{a.t.Shape[0], b.t.Shape[1]}}, a, b)
	case "Gemm":
		return x.gemm(n, sc)
	case "Transpose":
		a := x.floatIn(n, 0, sc)
		perm := []int64{}
		if p := attr(n, "perm"); p != nil {
			perm = p.Ints
		}
		switch {
		case a.t.Rank() == 2 && (len(perm) == 0 || slices.Equal(perm, []int64{1, 0})):
			return x.call("Transpose", ir.Type{DType: ir.Float32, Shape: []ir.Dim{a.t.Shape[1], a.t.Shape[0]}}, a)
		case a.t.Rank() <= 1 || isIdentityPerm(perm, a.t.Rank()):
			return passThrough(a)
		}
		x.fail(ClassRank, "Transpose of rank %d with perm %v: rxeq's Transpose swaps the two dimensions of a rank-2 tensor", a.t.Rank(), perm)
	case "Softmax", "LogSoftmax":
		a := x.floatIn(n, 0, sc)
		if a.t.Rank() == 0 {
			x.fail(ClassRank, "%s of a scalar", op)
		}
		def := int64(-1)
		if x.opset < 13 {
			def = 1
		}
		ax := x.axis(attrI(n, "axis", def), a.t.Rank())
		if x.opset < 13 && ax != a.t.Rank()-1 {
			x.fail(ClassAttr, "%s before opset 13 normalizes over all dimensions from axis %d on (flattened); rxeq's %s is over one axis, so only the last axis is translated", op, ax, op)
		}
		return x.call(op, a.t, a, ax)
	case "ReduceSum", "ReduceMean", "ReduceMax":
		return x.reduce(n, sc)
	case "ArgMax":
		a := x.floatIn(n, 0, sc)
		ax := x.axis(attrI(n, "axis", 0), a.t.Rank())
		if attrI(n, "select_last_index", 0) != 0 {
			x.fail(ClassAttr, "ArgMax with select_last_index=1: rxeq's Argmax gives the first index of the maximum")
		}
		if attrI(n, "keepdims", 1) != 0 {
			t := ir.Type{DType: ir.Int64, Shape: slices.Clone(a.t.Shape)}
			t.Shape[ax] = ir.Dim{Size: 1}
			return x.call("Argmax", t, a, ax, true)
		}
		t := ir.Type{DType: ir.Int64, Shape: slices.Delete(slices.Clone(a.t.Shape), ax, ax+1)}
		return x.call("Argmax", t, a, ax)
	case "Flatten", "Reshape", "Squeeze", "Unsqueeze":
		return x.reshape(n, sc)
	case "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual":
		a, b := x.input(n, 0, sc), x.input(n, 1, sc)
		if a.t.DType != ir.Int64 || b.t.DType != ir.Int64 || a.t.Rank() != 0 || b.t.Rank() != 0 {
			x.fail(ClassDType, "%s of %s and %s: rxeq compares int64 scalars only (control flow never depends on tensor values)", op, a.t, b.t)
		}
		return x.binary(a, compares[op], 3, b, scalar(ir.Bool))
	case "Not":
		a := x.boolIn(n, 0, sc)
		if p := x.producer(n.Input[0]); p != nil && p.OpType == "Equal" && a.prec == 3 {
			// rxeq writes a != b as Not(Equal(a, b)).
			return x.binary(x.input(p, 0, sc), "!=", 3, x.input(p, 1, sc), scalar(ir.Bool))
		}
		return x.unary("!", a, scalar(ir.Bool))
	case "And", "Or":
		a, b := x.boolIn(n, 0, sc), x.boolIn(n, 1, sc)
		if op == "And" {
			return x.binary(a, "&&", 2, b, scalar(ir.Bool))
		}
		return x.binary(a, "||", 1, b, scalar(ir.Bool))
	}
	x.fail(ClassOp, "op %s has no rxeq form; supported ops: %s", op, strings.Join(SupportedOps(), ", "))
	return nil
}

func (x *importer) boolIn(n *onnxpb.Node, i int, sc *scope) *val {
	v := x.input(n, i, sc)
	if v.t.DType != ir.Bool || v.t.Rank() != 0 {
		x.fail(ClassDType, "input %d is %s: rxeq's conditions are scalar", i, v.t)
	}
	if v.expr == "" {
		x.fail(ClassControl, "a constant condition: rxeq's conditions compare int64 values")
	}
	return v
}

// checkedOp translates an int64 scalar Div, and rxeq's remainder, as
// CheckedDiv and CheckedRem; nil for anything else.
func (x *importer) checkedOp(n *onnxpb.Node, sc *scope) *val {
	var a, b *val
	fn := "CheckedDiv"
	if n.OpType == "Sub" {
		an, bn, ok := x.remainder(n)
		if !ok {
			return nil
		}
		a, b, fn = x.get(an, sc), x.get(bn, sc), "CheckedRem"
	} else {
		a, b = x.input(n, 0, sc), x.get(x.unwhere(n.Input[1]), sc)
	}
	if a.t.DType != ir.Int64 || a.t.Rank() != 0 {
		if fn == "CheckedRem" {
			x.fail(ClassDType, "a remainder of %s: rxeq's CheckedRem takes int64 scalars", a.t)
		}
		return nil
	}
	if b.t.DType != ir.Int64 || b.t.Rank() != 0 {
		x.fail(ClassDType, "an int64 division by %s: rxeq's CheckedDiv takes int64 scalars", b.t)
	}
	return x.call(fn, scalar(ir.Int64), a, b)
}

// constant reads a Constant node.
func (x *importer) constant(n *onnxpb.Node) *val {
	if len(n.Attribute) != 1 {
		x.fail(ClassAttr, "a Constant needs exactly one value attribute")
	}
	a := n.Attribute[0]
	var k *tensor.Tensor
	switch a.Name {
	case "value":
		if a.T == nil {
			x.fail(ClassAttr, "value is not a tensor")
		}
		if a.T.DataType == onnxpb.TypeBool {
			raw := a.T.RawData
			if len(a.T.Dims) == 0 && (len(raw) == 1 || len(a.T.Int32Data) == 1) {
				b := len(raw) == 1 && raw[0] != 0 || len(a.T.Int32Data) == 1 && a.T.Int32Data[0] != 0
				return &val{t: scalar(ir.Bool), kbool: &b}
			}
			x.fail(ClassDType, "a BOOL tensor constant")
		}
		t, err := x.tensorOf(a.T)
		if err != nil {
			x.fail(ClassDType, "%v", err)
		}
		k = t
	case "value_float":
		k = tensor.FromFloat32([]float32{a.F})
	case "value_floats":
		k = tensor.FromFloat32(slices.Clone(a.Floats), len(a.Floats))
	case "value_int":
		k = tensor.FromInt64([]int64{a.I})
	case "value_ints":
		k = tensor.FromInt64(slices.Clone(a.Ints), len(a.Ints))
	default:
		x.fail(ClassAttr, "a Constant's %s: Import reads value, value_float(s) and value_int(s)", a.Name)
	}
	v := &val{t: typeOfTensor(k), konst: k, name: n.Output[0], prec: 7}
	if lit, ok := strings.CutPrefix(n.DocString, LiteralDoc); ok && k.DType == tensor.Float32 && k.Rank() == 0 {
		// The float64 literal rxeq's export rounded: kept when it is one.
		if f, err := strconv.ParseFloat(lit, 64); err == nil && float32(f) == k.F32[0] && !math.IsInf(f, 0) {
			v.lit = strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(v.lit, ".e") {
				v.lit += ".0"
			}
		}
	}
	return v
}

// gemm is alpha * A' B' + beta * C.
func (x *importer) gemm(n *onnxpb.Node, sc *scope) *val {
	a, b := x.floatIn(n, 0, sc), x.floatIn(n, 1, sc)
	if a.t.Rank() != 2 || b.t.Rank() != 2 {
		x.fail(ClassRank, "Gemm of ranks %d and %d", a.t.Rank(), b.t.Rank())
	}
	if attrI(n, "transA", 0) != 0 {
		a = x.call("Transpose", ir.Type{DType: ir.Float32, Shape: []ir.Dim{a.t.Shape[1], a.t.Shape[0]}}, a)
	}
	if attrI(n, "transB", 0) != 0 {
		b = x.call("Transpose", ir.Type{DType: ir.Float32, Shape: []ir.Dim{b.t.Shape[1], b.t.Shape[0]}}, b)
	}
	t := ir.Type{DType: ir.Float32, Shape: []ir.Dim{a.t.Shape[0], b.t.Shape[1]}}
	out := x.call("MatMul", t, a, b)
	if alpha := attrF(n, "alpha", 1); alpha != 1 {
		lit, ok := floatLit(alpha)
		if !ok {
			x.fail(ClassAttr, "alpha %v has no literal", alpha)
		}
		out = x.binary(&val{expr: lit, prec: 6}, "*", 5, out, t)
	}
	if len(n.Input) > 2 && n.Input[2] != "" {
		c := x.floatIn(n, 2, sc)
		if beta := attrF(n, "beta", 1); beta != 1 {
			lit, ok := floatLit(beta)
			if !ok {
				x.fail(ClassAttr, "beta %v has no literal", beta)
			}
			c = x.binary(&val{expr: lit, prec: 6}, "*", 5, c, c.t)
		}
		bt := x.broadcast(t.Shape, c.t.Shape)
		if !sameShape(bt, t.Shape) {
			x.fail(ClassShape, "Gemm's C of shape %v does not broadcast to %v", c.t.Shape, t.Shape)
		}
		out = x.binary(out, "+", 4, c, t)
	}
	return out
}

// reduce translates ReduceSum, ReduceMean and ReduceMax, one axis at a
// time from the last.
func (x *importer) reduce(n *onnxpb.Node, sc *scope) *val {
	a := x.floatIn(n, 0, sc)
	if x.reduceInput(n) && len(x.reduceAxesSpec(n, sc)) == 0 && attrI(n, "noop_with_empty_axes", 0) != 0 {
		return passThrough(a)
	}
	if a.t.Rank() == 0 {
		x.fail(ClassRank, "%s of a scalar", n.OpType)
	}
	return x.reduceOver(n, a, x.reduceAxes(n, a.t.Rank(), sc), attrI(n, "keepdims", 1) != 0)
}

// reduceInput reports whether the reduction n takes its axes as an input
// (ReduceSum from opset 13, every reduction from 18) rather than an
// attribute.
func (x *importer) reduceInput(n *onnxpb.Node) bool {
	return n.OpType == "ReduceSum" && x.opset >= 13 || x.opset >= 18
}

// reduceAxesSpec returns the axes of the reduction n as written (nil
// for none).
func (x *importer) reduceAxesSpec(n *onnxpb.Node, sc *scope) []int64 {
	if x.reduceInput(n) {
		if len(n.Input) > 1 && n.Input[1] != "" {
			return x.konstInts(n, 1, sc)
		}
		return nil
	}
	if at := attr(n, "axes"); at != nil {
		return at.Ints
	}
	return nil
}

// reduceAxes returns the axes the reduction n reduces of an input of
// rank r, normalized, sorted and unique (every axis when none are given).
func (x *importer) reduceAxes(n *onnxpb.Node, r int, sc *scope) []int {
	axes := x.reduceAxesSpec(n, sc)
	if len(axes) == 0 {
		for i := range r {
			axes = append(axes, int64(i))
		}
	}
	norm := make([]int, len(axes))
	for i, ax := range axes {
		norm[i] = x.axis(ax, r)
	}
	slices.Sort(norm)
	return slices.Compact(norm)
}

// reduceOver is the reduction n of a over axes (reduceAxes), keeping them
// with size 1 or removing them.
func (x *importer) reduceOver(n *onnxpb.Node, a *val, axes []int, keep bool) *val {
	fn := map[string]string{"ReduceSum": "Sum", "ReduceMean": "Mean", "ReduceMax": "Max"}[n.OpType]
	out := a
	for i := len(axes) - 1; i >= 0; i-- {
		ax := axes[i]
		shape := slices.Clone(out.t.Shape)
		if keep {
			shape[ax] = ir.Dim{Size: 1}
			out = x.call(fn, ir.Type{DType: ir.Float32, Shape: shape}, out, ax, true)
		} else {
			out = x.call(fn, ir.Type{DType: ir.Float32, Shape: slices.Delete(shape, ax, ax+1)}, out, ax)
		}
	}
	return out
}

// reshape translates Flatten, Reshape, Squeeze and Unsqueeze where the
// language can express them (reshapeTo): the identity, removing axes of
// size 1 (as Max over them, which is exact), and adding axes of size 1 in
// front or to a rank-1 tensor. Unsqueeze of a reduction that removed the
// same axes is the reduction that keeps them.
func (x *importer) reshape(n *onnxpb.Node, sc *scope) *val {
	a := x.input(n, 0, sc)
	if a.t.DType != ir.Float32 {
		x.fail(ClassDType, "%s of %s", n.OpType, a.t)
	}
	same := func() *val { return passThrough(a) }
	to := func(shape []ir.Dim) *val {
		if len(shape) > 4 {
			x.fail(ClassRank, "%s of %s to rank %d: rxeq tensors have rank 0 to 4", n.OpType, typeString(a.t), len(shape))
		}
		v, why := x.reshapeTo(a, shape)
		if v == nil {
			x.fail(ClassShape, "%s of %s to %s: %s", n.OpType, typeString(a.t), typeString(ir.Type{DType: ir.Float32, Shape: shape}), why)
		}
		return v
	}
	switch n.OpType {
	case "Flatten":
		ax := x.axis(attrI(n, "axis", 1), a.t.Rank()+1)
		lo, ok1 := dimProduct(a.t.Shape[:ax])
		hi, ok2 := dimProduct(a.t.Shape[ax:])
		if !ok1 || !ok2 {
			x.fail(ClassShape, "Flatten of %s at axis %d multiplies a symbolic dimension by another dimension: rxeq has no reshape", typeString(a.t), ax)
		}
		return to([]ir.Dim{lo, hi})
	case "Reshape":
		spec := x.konstInts(n, 1, sc)
		shape, why := resolveReshape(a.t.Shape, spec, attrI(n, "allowzero", 0) != 0)
		if shape == nil {
			x.fail(ClassShape, "Reshape of %v to %v: %s", typeString(a.t), spec, why)
		}
		return to(shape)
	case "Unsqueeze":
		var axes []int64
		if x.opset >= 13 {
			axes = x.konstInts(n, 1, sc)
		} else if at := attr(n, "axes"); at != nil {
			axes = at.Ints
		}
		if len(axes) == 0 {
			x.fail(ClassAttr, "Unsqueeze without axes")
		}
		r := a.t.Rank() + len(axes)
		norm := make([]int, len(axes))
		for i, ax := range axes {
			norm[i] = x.axis(ax, r)
		}
		slices.Sort(norm)
		if len(slices.Compact(slices.Clone(norm))) != len(norm) {
			x.fail(ClassAttr, "Unsqueeze with repeated axes %v", axes)
		}
		if v := x.keptReduce(n, norm, sc); v != nil {
			return v
		}
		shape := slices.Clone(a.t.Shape)
		for _, ax := range norm {
			shape = slices.Insert(shape, ax, ir.Dim{Size: 1})
		}
		return to(shape)
	case "Squeeze":
		var axes []int64
		if x.opset >= 13 {
			if len(n.Input) > 1 && n.Input[1] != "" {
				axes = x.konstInts(n, 1, sc)
			}
		} else if at := attr(n, "axes"); at != nil {
			axes = at.Ints
		}
		if len(axes) == 0 {
			for i, d := range a.t.Shape {
				if d == (ir.Dim{Size: 1}) {
					axes = append(axes, int64(i))
				}
			}
		}
		norm := make([]int, len(axes))
		for i, ax := range axes {
			norm[i] = x.axis(ax, a.t.Rank())
			if a.t.Shape[norm[i]] != (ir.Dim{Size: 1}) {
				x.fail(ClassShape, "Squeeze of axis %d of size %v", norm[i], a.t.Shape[norm[i]])
			}
		}
		slices.Sort(norm)
		out := x.squeeze(a, norm)
		if out == a {
			return same()
		}
		return out
	}
	return nil
}

// squeeze removes the axes of size 1 in axes (sorted) from a, each as Max
// over it: the one element, exactly.
func (x *importer) squeeze(a *val, axes []int) *val {
	out := a
	for i := len(axes) - 1; i >= 0; i-- {
		shape := slices.Delete(slices.Clone(out.t.Shape), axes[i], axes[i]+1)
		out = x.call("Max", ir.Type{DType: ir.Float32, Shape: shape}, out, axes[i])
	}
	return out
}

// keptReduce translates Unsqueeze(ReduceSum|ReduceMean|ReduceMax(x,
// keepdims=0), axes) over the same axes as the reduction with keepdims=1
// (what PyTorch's x.max(1).values.unsqueeze(1) exports to), or returns
// nil when n is not that.
func (x *importer) keptReduce(n *onnxpb.Node, axes []int, sc *scope) *val {
	p := x.producer(n.Input[0])
	if p == nil || p.OpType != "ReduceSum" && p.OpType != "ReduceMean" && p.OpType != "ReduceMax" || attrI(p, "keepdims", 1) != 0 {
		return nil
	}
	src := sc.get(p.Input[0])
	if src == nil || src.t.DType != ir.Float32 || src.t.Rank() == 0 ||
		x.reduceInput(p) && len(x.reduceAxesSpec(p, sc)) == 0 && attrI(p, "noop_with_empty_axes", 0) != 0 {
		return nil
	}
	reduced := x.reduceAxes(p, src.t.Rank(), sc)
	if reduced == nil || !slices.Equal(reduced, axes) {
		return nil
	}
	return x.reduceOver(p, src, reduced, true)
}

// reshapeTo gives a (float32) the shape target, which holds the same
// elements in the same order, where the language can express it: the
// identity; removing axes of size 1 (squeeze); adding axes of size 1 in
// front, by broadcasting against a tensor of ones (ones); and making a
// rank-1 tensor of K elements a column [K 1], as Transpose of the row
// [1 K]. Every step is exact. Otherwise it returns nil and why not.
func (x *importer) reshapeTo(a *val, target []ir.Dim) (*val, string) {
	if sameShape(a.t.Shape, target) {
		return passThrough(a), ""
	}
	one := ir.Dim{Size: 1}
	notOne := func(ds []ir.Dim) []ir.Dim {
		return slices.DeleteFunc(slices.Clone(ds), func(d ir.Dim) bool { return d == one })
	}
	if !slices.Equal(notOne(a.t.Shape), notOne(target)) {
		return nil, "it merges, splits or reorders dimensions, and rxeq has no reshape (only axes of size 1 are removed or added)"
	}
	// inFront reports whether target is shape with axes of size 1 in front.
	inFront := func(shape []ir.Dim) bool {
		k := len(target) - len(shape)
		return k > 0 && sameShape(target[k:], shape) && !slices.ContainsFunc(target[:k], func(d ir.Dim) bool { return d != one })
	}
	if inFront(a.t.Shape) {
		return x.prepend(a, len(target)), ""
	}
	var ones []int
	for i, d := range a.t.Shape {
		if d == one {
			ones = append(ones, i)
		}
	}
	sq := x.squeeze(a, ones)
	switch {
	case sameShape(sq.t.Shape, target):
		return sq, ""
	case inFront(sq.t.Shape):
		return x.prepend(sq, len(target)), ""
	case sq.t.Rank() == 1 && len(target) >= 2 && target[len(target)-1] == one && sameShape(target[len(target)-2:len(target)-1], sq.t.Shape):
		col := x.call("Transpose", ir.Type{DType: ir.Float32, Shape: []ir.Dim{sq.t.Shape[0], one}}, x.prepend(sq, 2))
		if len(target) == 2 {
			return col, ""
		}
		return x.prepend(col, len(target)), ""
	}
	return nil, "it adds an axis of size 1 after the first dimension of a tensor of rank 2 or more, which rxeq cannot express (it adds axes of size 1 only in front, by broadcasting, or to a rank-1 tensor, by Transpose; it has no reshape)"
}

// prepend gives a leading axes of size 1 up to rank r: a * ones(r), with
// NumPy's broadcasting; x*1 is x for every float32 (NaN, the infinities
// and -0 included), so the values are a's exactly.
func (x *importer) prepend(a *val, r int) *val {
	shape := slices.Clone(a.t.Shape)
	for len(shape) < r {
		shape = slices.Insert(shape, 0, ir.Dim{Size: 1})
	}
	return x.binary(a, "*", 5, x.ones(r), ir.Type{DType: ir.Float32, Shape: shape})
}

// ones is a tensor of rank r whose dimensions are all 1 and whose element
// is 1, as a weight parameter (//rx:input NAME const(1), and its .npy): one
// per rank and program.
func (x *importer) ones(r int) *val {
	if v := x.onesOf[r]; v != nil {
		return v
	}
	dims, shape := make([]int, r), make([]ir.Dim, r)
	for i := range dims {
		dims[i], shape[i] = 1, ir.Dim{Size: 1}
	}
	k := tensor.NewFloat32(dims...)
	k.F32[0] = 1
	v := &val{t: ir.Type{DType: ir.Float32, Shape: shape}, konst: k, name: fmt.Sprintf("ones%d", r), dist: "const(1)", prec: 7}
	if x.onesOf == nil {
		x.onesOf = map[int]*val{}
	}
	x.onesOf[r] = v
	return v
}

// dimProduct is the product of ds as one dimension: a size, or a symbol
// when exactly one dimension is symbolic and the others are 1.
func dimProduct(ds []ir.Dim) (ir.Dim, bool) {
	p, sym := int64(1), ir.Dim{}
	for _, d := range ds {
		switch {
		case d.IsSym() && sym.IsSym():
			return ir.Dim{}, false
		case d.IsSym():
			sym = d
		default:
			p *= d.Size
		}
	}
	if sym.IsSym() {
		if p != 1 {
			return ir.Dim{}, false
		}
		return sym, true
	}
	return ir.Dim{Size: p}, true
}

// resolveReshape is the shape Reshape's spec gives a tensor of shape in:
// 0 copies the input's dimension (unless allowzero), -1 is what the
// element count leaves. It returns nil and why when that is not one
// dimension, a size or a symbol, or the counts disagree.
func resolveReshape(in []ir.Dim, spec []int64, allowzero bool) ([]ir.Dim, string) {
	out := make([]ir.Dim, len(spec))
	infer := -1
	for i, s := range spec {
		switch {
		case s == -1:
			if infer >= 0 {
				return nil, "two dimensions are -1"
			}
			infer = i
		case s == 0 && !allowzero:
			if i >= len(in) {
				return nil, fmt.Sprintf("dimension %d is 0 (copy) beyond the input's rank", i)
			}
			out[i] = in[i]
		case s <= 0:
			return nil, fmt.Sprintf("dimension %d is %d: rxeq tensors have no empty dimension", i, s)
		default:
			out[i] = ir.Dim{Size: s}
		}
	}
	// The counts as a size times the symbols, which must match.
	count := func(ds []ir.Dim) (int64, []string) {
		p, syms := int64(1), []string(nil)
		for _, d := range ds {
			if d.IsSym() {
				syms = append(syms, d.Sym)
			} else {
				p *= d.Size
			}
		}
		slices.Sort(syms)
		return p, syms
	}
	pin, sin := count(in)
	known := slices.Clone(out)
	if infer >= 0 {
		known = slices.Delete(known, infer, infer+1)
	}
	pout, sout := count(known)
	if infer < 0 {
		if pin != pout || !slices.Equal(sin, sout) {
			return nil, "the element counts differ"
		}
		return out, ""
	}
	left := slices.Clone(sin)
	for _, s := range sout {
		i := slices.Index(left, s)
		if i < 0 {
			return nil, "the -1 dimension would be a fraction of a symbolic one"
		}
		left = slices.Delete(left, i, i+1)
	}
	if pout == 0 || pin%pout != 0 {
		return nil, "the element counts differ"
	}
	f := pin / pout
	switch {
	case len(left) == 0:
		out[infer] = ir.Dim{Size: f}
	case len(left) == 1 && f == 1:
		out[infer] = ir.Dim{Sym: left[0]}
	default:
		return nil, "the -1 dimension would multiply a symbolic dimension by another"
	}
	return out, ""
}

func isIdentityPerm(perm []int64, rank int) bool {
	if len(perm) != rank {
		return false
	}
	for i, p := range perm {
		if p != int64(i) {
			return false
		}
	}
	return true
}

// benignCond reports whether a Loop condition is rxeq's "no failure yet"
// (Equal(Gather(state, 0), 0)), a constant true, or the body's own
// condition input passed through.
func (x *importer) benignCond(name string, loop *onnxpb.Node) bool {
	if name == "" {
		return true
	}
	if b, ok := x.bodyIn[name]; ok && b.loop == loop && b.idx == 1 {
		return true
	}
	n := x.producer(name)
	if n == nil {
		return false
	}
	switch n.OpType {
	case "Identity":
		return x.benignCond(n.Input[0], loop)
	case "Constant":
		a := attr(n, "value")
		return a != nil && a.T != nil && a.T.DataType == onnxpb.TypeBool && len(a.T.Dims) == 0 && len(a.T.RawData) == 1 && a.T.RawData[0] == 1
	case "Equal":
		if !x.hasErr || len(n.Input) != 2 {
			return false
		}
		z, ok := x.constInt(n.Input[1])
		g := x.producer(n.Input[0])
		return ok && z == 0 && g != nil && g.OpType == "Gather"
	}
	return false
}

// loop translates a Loop as rxeq writes it: an int64 scalar trip count
// (a constant, an int64 graph input, or a computed value, which becomes
// a local declared just before the loop), no condition other than rxeq's
// error state, loop-carried values and no scan outputs.
func (x *importer) loop(n *onnxpb.Node, g *onnxpb.Graph, sc *scope) {
	body := subgraph(n, "body")
	if body == nil || len(n.Input) < 2 || len(body.Input) != len(n.Input) || len(body.Output) != len(n.Input)-1 {
		x.fail(ClassControl, "a Loop with scan outputs or a malformed body: Import reads a trip count, no condition and loop-carried values")
	}
	if n.Input[0] == "" {
		x.fail(ClassControl, "a Loop without a trip count: rxeq's for runs a count known before the loop")
	}
	if !x.benignCond(n.Input[1], n) || !x.benignCond(body.Output[0].Name, n) {
		x.fail(ClassControl, "a Loop whose condition is computed: rxeq's for runs a count known before the loop")
	}
	cv := x.get(x.tripCount(n.Input[0]), sc)
	var count string
	switch {
	case cv.konst != nil && cv.konst.DType == tensor.Int64 && cv.konst.Rank() == 0:
		count, _ = intLit(cv.konst.I64[0])
	case cv.param && cv.t.DType == ir.Int64 && cv.t.Rank() == 0:
		count = cv.expr
	case cv.t.DType == ir.Int64 && cv.t.Rank() == 0:
		// A computed count (rxeq's export of a local count): a local,
		// which the for reads once, before the first trip, as Loop reads
		// its trip count. A local the importer declared already is
		// counted to as it is (the body may assign it: that does not
		// change the trips); any other value is declared first.
		if d := x.data(cv); d.local && d.isVar {
			count = d.expr
		} else {
			count = x.newName("trip_count")
			x.emit("%s := %s", count, d.expr)
		}
	default:
		x.fail(ClassControl, "the Loop's trip count %s is %s: rxeq's for counts to an int64 scalar", n.Input[0], cv.t)
	}
	inner := &scope{parent: sc, vals: map[string]*val{}, level: sc.level + 1}
	head := "for range " + count
	if iter := body.Input[0].Name; x.needed[iter] {
		name := x.newName(iter)
		inner.vals[iter] = &val{t: scalar(ir.Int64), expr: name, prec: 7, isVar: true, level: inner.level}
		head = "for " + name + " := range " + count
	}
	type carry struct {
		k      int
		target string
	}
	var cs []carry
	for k := 0; k+2 < len(n.Input); k++ {
		if !x.carried(n, k) {
			continue
		}
		init := x.data(x.get(n.Input[k+2], sc))
		if init.t.DType == ir.Bool {
			x.fail(ClassControl, "a BOOL loop-carried value")
		}
		out := n.Output[k]
		var target string
		if r, ok := x.results[out]; ok && sc.level == 0 && x.needed[out] {
			target = r
			x.emit("%s = %s", r, init.expr)
		} else {
			target = x.newName(out)
			x.emit("%s := %s", target, init.expr)
		}
		inner.vals[body.Input[k+2].Name] = &val{t: init.t, expr: target, prec: 7, isVar: true, level: sc.level, local: true}
		cs = append(cs, carry{k, target})
	}
	x.emit("%s {", head)
	x.graph(body, inner)
	x.cur = n
	var as []assign
	for _, c := range cs {
		v := x.data(x.get(body.Output[c.k+1].Name, inner))
		if v.expr != c.target {
			as = append(as, assign{c.target, v.expr})
		}
	}
	x.lines = append(x.lines, x.sequential(as)...)
	x.emit("}")
	for _, c := range cs {
		t := inner.vals[body.Input[c.k+2].Name].t
		isResult := x.results[n.Output[c.k]] == c.target && sc.level == 0
		sc.vals[n.Output[c.k]] = &val{t: t, expr: c.target, prec: 7, isVar: true, level: sc.level, result: isResult, local: !isResult}
	}
}

// branch translates an If: as an expression when every output read is a
// condition (rxeq's && and ||), as an if statement otherwise.
func (x *importer) branch(n *onnxpb.Node, g *onnxpb.Graph, sc *scope) {
	cond := x.boolIn(n, 0, sc)
	then, els := subgraph(n, "then_branch"), subgraph(n, "else_branch")
	if then == nil || els == nil || len(then.Output) != len(n.Output) || len(els.Output) != len(n.Output) {
		x.fail(ClassControl, "an If without both branches or with a different number of outputs")
	}
	var active []int
	for k, o := range n.Output {
		if x.needed[o] {
			active = append(active, k)
		}
	}
	allBool := len(active) > 0
	x.flush()
	tsc := &scope{parent: sc, vals: map[string]*val{}, level: sc.level + 1}
	esc := &scope{parent: sc, vals: map[string]*val{}, level: sc.level + 1}
	// Each branch's outputs are read before the next branch is written,
	// so its values with checked arithmetic are declared in it.
	translate := func(g *onnxpb.Graph, bsc *scope) ([]string, map[int]*val) {
		saved := x.lines
		x.lines = nil
		x.graph(g, bsc)
		x.cur = n
		outs := map[int]*val{}
		for _, k := range active {
			outs[k] = x.data(x.get(g.Output[k].Name, bsc))
		}
		x.flush()
		lines := x.lines
		x.lines = saved
		return lines, outs
	}
	thenLines, touts := translate(then, tsc)
	elseLines, eouts := translate(els, esc)
	for _, k := range active {
		if touts[k].t.DType != ir.Bool {
			allBool = false
		}
	}
	if allBool {
		if len(thenLines)+len(elseLines) > 0 {
			x.fail(ClassControl, "an If whose BOOL output needs statements in a branch")
		}
		for _, k := range active {
			t, e := touts[k], eouts[k]
			var v *val
			switch {
			case e.expr == cond.expr:
				v = x.binary(cond, "&&", 2, t, scalar(ir.Bool))
			case t.expr == cond.expr:
				v = x.binary(cond, "||", 1, e, scalar(ir.Bool))
			default:
				v = x.binary(x.binary(cond, "&&", 2, t, scalar(ir.Bool)), "||", 1,
					x.binary(x.unary("!", cond, scalar(ir.Bool)), "&&", 2, e, scalar(ir.Bool)), scalar(ir.Bool))
			}
			v.level = sc.level
			sc.vals[n.Output[k]] = v
		}
		return
	}
	var tAssign, eAssign []assign
	reused := map[string]bool{}
	declared := map[string]*val{} // the outputs' variables, in scope after the If
	// The outer values an output passes through unchanged in both
	// branches: that output is the value's variable after the If, so the
	// variable is not another output's to reuse (fuzz seed 11374: t2 = t2
	// in the branch that set out0 = Exp(out0), both from one variable).
	kept := map[string]bool{}
	for _, k := range active {
		if t, e := touts[k], eouts[k]; t.level <= sc.level && e.level <= sc.level && t.expr == e.expr {
			kept[t.expr] = true
		}
	}
	for _, k := range active {
		t, e := touts[k], eouts[k]
		if t.t.DType == ir.Bool {
			x.fail(ClassControl, "an If with both BOOL and tensor outputs")
		}
		out := n.Output[k]
		outer := func(v *val) bool { return v.level <= sc.level }
		if outer(t) && outer(e) && t.expr == e.expr {
			sc.vals[out] = t
			continue
		}
		var init *val
		var old string // the ONNX name of the value a branch passes through
		switch {
		case outer(t):
			init, old = t, x.passed(then, then.Output[k].Name)
		case outer(e):
			init, old = e, x.passed(els, els.Output[k].Name)
		}
		r, isResult := x.results[out]
		isResult = isResult && sc.level == 0
		target := r
		reuse := false
		if init == nil && !isResult {
			init, old = x.sameType(t.t, sc)
		}
		if init == nil && !isResult {
			// No value of the type before the If (the program declared
			// the variable with one that nothing else reads, so the
			// model does not compute it): a branch that computes its
			// output without statements and without checked arithmetic
			// gives an expression of outer values alone, which cannot
			// fail, so it declares the variable. (Fuzz seed 552.)
			init = branchInit(t, thenLines, sc)
			if init == nil {
				init = branchInit(e, elseLines, sc)
			}
		}
		if !isResult {
			// The variable of the value passed through (or of the old
			// value of the type) is the output's when nothing reads that
			// value after the If.
			if init != nil && init.local && !reused[init.expr] && !kept[init.expr] && old != "" && x.lastRead(n, g, old) && !unread(sc, init.expr) {
				target, reuse = init.expr, true
				reused[target] = true
			} else {
				target = x.newName(out)
			}
		}
		if init == nil && !isResult {
			x.fail(ClassControl, "output %q of the If is written by both branches and no value of its type %s is in scope to declare it with", out, t.t)
		}
		switch {
		case reuse:
		case isResult && init != nil:
			x.emit("%s = %s", target, init.expr)
		case !isResult:
			x.emit("%s := %s", target, init.expr)
		}
		if init == nil || t.expr != init.expr {
			tAssign = append(tAssign, assign{target, t.expr})
		}
		if init == nil || e.expr != init.expr {
			eAssign = append(eAssign, assign{target, e.expr})
		}
		declared[out] = &val{t: t.t, expr: target, prec: 7, isVar: true, level: sc.level, result: isResult, local: !isResult}
	}
	// The outputs are in scope after the If only: an output's variable is
	// not a value of its type to declare a later output with (fuzz seed
	// 7570: t15_2 := out1, where the If assigns the result out1).
	maps.Copy(sc.vals, declared)
	x.emit("if %s {", cond.expr)
	x.lines = append(x.lines, thenLines...)
	x.lines = append(x.lines, x.sequential(tAssign)...)
	if len(elseLines)+len(eAssign) > 0 {
		x.emit("} else {")
		x.lines = append(x.lines, elseLines...)
		x.lines = append(x.lines, x.sequential(eAssign)...)
	}
	x.emit("}")
}

// passed returns the outer ONNX name a branch output passes through
// (through Identity nodes of the branch), or "".
func (x *importer) passed(g *onnxpb.Graph, name string) string {
	for {
		p := x.producer(name)
		if p == nil || x.graphOf[p] != g {
			if p == nil && x.bodyIn[name].loop == nil {
				return "" // a graph input or initializer: never reused
			}
			return name
		}
		if p.OpType != "Identity" || len(p.Input) != 1 {
			return ""
		}
		name = p.Input[0]
	}
}

// lastRead reports whether If node n in graph g is the last reader of
// the value old, which g defines (a node's output or a Loop body's
// carried input) and no graph outputs: then the If can write the
// variable holding old.
func (x *importer) lastRead(n *onnxpb.Node, g *onnxpb.Graph, old string) bool {
	if x.graphOuts[old] {
		return false
	}
	if p := x.producer(old); p != nil {
		if x.graphOf[p] != g {
			return false
		}
	} else if b, ok := x.bodyIn[old]; !ok || b.idx < 2 || subgraph(b.loop, "body") != g {
		return false
	}
	at := slices.Index(g.Node, n)
	for _, r := range x.readers[old] {
		for x.graphOf[r] != g {
			r = x.owner[x.graphOf[r]]
			if r == nil {
				return false
			}
		}
		if slices.Index(g.Node, r) > at {
			return false
		}
	}
	return true
}

// unread reports whether an expression not evaluated yet (inlined where
// it is read, later) mentions variable name.
func unread(sc *scope, name string) bool {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	for s := sc; s != nil; s = s.parent {
		for _, v := range s.vals {
			if !v.isVar && v.expr != "" && !v.used && re.MatchString(v.expr) {
				return true
			}
		}
	}
	return false
}

// sameType returns a variable in scope of type t, or a zero scalar.
func (x *importer) sameType(t ir.Type, sc *scope) (*val, string) {
	for k, v := range sc.inward() {
		if v.isVar && v.t.DType == t.DType && sameShape(v.t.Shape, t.Shape) {
			return v, k
		}
	}
	if t.Rank() == 0 && t.DType == ir.Int64 {
		return &val{t: t, expr: "0", prec: 7}, ""
	}
	if t.Rank() == 0 && t.DType == ir.Float32 {
		return &val{t: t, expr: "0.0", prec: 7}, ""
	}
	// A float expression of the type, inlined where it is read: declared
	// here (float arithmetic cannot fail, so evaluating it early changes
	// nothing).
	for k, v := range sc.inward() {
		if !v.isVar && v.expr != "" && !v.checked && v.t.DType == ir.Float32 && t.DType == ir.Float32 && sameShape(v.t.Shape, t.Shape) {
			name := x.newName(k)
			x.emit("%s := %s", name, v.expr)
			return &val{t: t, expr: name, prec: 7, isVar: true, level: sc.level, local: true}, ""
		}
	}
	// A float value of higher rank whose dimensions hold t's in order,
	// summed over the others: float arithmetic cannot fail, and the
	// value is overwritten by both branches, so only its type matters
	// (fuzz seed 26267: t0 of [6], with b0 of [6][6] in scope).
	for _, v := range sc.inward() {
		if v.expr == "" || v.checked || v.t.DType != ir.Float32 || t.DType != ir.Float32 || v.t.Rank() <= t.Rank() {
			continue
		}
		if drop, ok := subsequence(v.t.Shape, t.Shape); ok {
			expr := v.expr
			for i := len(drop) - 1; i >= 0; i-- {
				expr = fmt.Sprintf("Sum(%s, %d)", expr, drop[i])
			}
			return &val{t: t, expr: expr, prec: 7}, ""
		}
	}
	return nil, ""
}

// subsequence returns the axes of have to sum over so that the others
// are want's dimensions, in order (greedily, from the first), and whether
// there are such axes.
func subsequence(have, want []ir.Dim) (drop []int, ok bool) {
	j := 0
	for i, d := range have {
		if j < len(want) && d == want[j] {
			j++
			continue
		}
		drop = append(drop, i)
	}
	return drop, j == len(want)
}

func typeString(t ir.Type) string {
	var b strings.Builder
	for _, d := range t.Shape {
		b.WriteString("[" + d.String() + "]")
	}
	b.WriteString(t.DType.String())
	return b.String()
}

var scenarioChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// program writes the file: the header, directives, the function.
func (x *importer) program(fn string, outs []*onnxpb.ValueInfo) ([]byte, error) {
	var b strings.Builder
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(s, "?"))
	}
	src := x.opt.Source
	if src == "" {
		src = "an ONNX model"
	}
	fmt.Fprintf(&b, "// Imported by rxeq import from %s", clean(src))
	b.WriteString(" (")
	if x.m.ProducerName != "" {
		fmt.Fprintf(&b, "producer %s, ", strings.TrimSpace(clean(x.m.ProducerName+" "+x.m.ProducerVersion)))
	}
	fmt.Fprintf(&b, "opset %d, graph %q).\n", x.opset, clean(x.m.Graph.Name))
	if len(x.weights) > 0 {
		ws := make([]string, 0, len(x.weights))
		for k := range x.weights {
			ws = append(ws, k)
		}
		sort.Strings(ws)
		dir := x.opt.WeightsDir
		if dir == "" {
			dir = "WEIGHTS"
		}
		fmt.Fprintf(&b, "// The parameters %s hold the model's weights, in %s/NAME.npy:\n// run it with rxeq run --inputs %s FILE.rx.\n", strings.Join(ws, ", "), clean(dir), clean(dir))
	}
	fmt.Fprintf(&b, "//rx:scenario %s\n", scenarioChars.ReplaceAllString(fn, "_"))
	usesB := false
	for _, p := range x.params {
		for _, d := range p.t.Shape {
			if d.Sym == "B" {
				usesB = true
			}
		}
	}
	if usesB {
		b.WriteString("//rx:batches 1 16\n")
	}
	b.WriteString("//rx:seed 1\n")
	for _, p := range x.params {
		fmt.Fprintf(&b, "//rx:input %s %s\n", p.name, p.dist)
	}
	b.WriteString("package imported\n\n")
	var ps, rs []string
	for _, p := range x.params {
		ps = append(ps, p.name+" "+typeString(p.t))
	}
	for _, o := range outs {
		t := x.resultT[o.Name]
		if t.DType == ir.Bool {
			x.fail(ClassDType, "graph output %q is a BOOL: rxeq results are float32 or int64", o.Name)
		}
		if t.DType == ir.Int64 && t.Rank() > 0 && t.Rank() > 4 {
			x.fail(ClassRank, "graph output %q has rank %d", o.Name, t.Rank())
		}
		rs = append(rs, x.results[o.Name]+" "+typeString(t))
	}
	fmt.Fprintf(&b, "func %s(%s) (%s) {\n", fn, strings.Join(ps, ", "), strings.Join(rs, ", "))
	for _, l := range x.lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("return\n}\n")
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, &ImportError{Class: ClassModel, Msg: fmt.Sprintf("internal error: the program does not format: %v\n%s", err, b.String())}
	}
	if _, err := program.ParseScenario(fn+".rx", out); err != nil {
		return nil, &ImportError{Class: classOfCheck(err), Msg: fmt.Sprintf("the program does not check: %v", err)}
	}
	return out, nil
}

// classOfCheck classifies a checker error on an imported program.
func classOfCheck(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "rank"):
		return ClassRank
	case strings.Contains(s, "element type"), strings.Contains(s, "int64"):
		return ClassDType
	}
	return ClassShape
}

// ReadTensor decodes a TensorProto of type FLOAT or INT64, like the
// input_N.pb and output_N.pb files of ONNX's node tests.
func ReadTensor(b []byte) (*tensor.Tensor, error) {
	t, err := onnxpb.UnmarshalTensor(b)
	if err != nil {
		return nil, err
	}
	return (&importer{}).tensorOf(t)
}

// branchInit is a branch's output v as the value that declares the If's
// output before the If, when the branch computes it with no statement of
// its own (lines) and v is a float expression without checked
// arithmetic: then it reads only values of the outer scopes and cannot
// fail, so evaluating it before the If changes nothing. nil otherwise.
func branchInit(v *val, lines []string, sc *scope) *val {
	if len(lines) > 0 || v == nil || v.expr == "" || v.checked || v.t.DType != ir.Float32 {
		return nil
	}
	return &val{t: v.t, expr: v.expr, prec: v.prec, level: sc.level}
}

// assign is one assignment of a Loop's carried value or an If's output
// at the end of its body or branch: target = expr.
type assign struct{ target, expr string }

// sequential returns the lines that make the assignments as, which the
// model makes at once (a Loop body's outputs, an If branch's), one after
// the other: a value that reads a target assigned before it is computed
// into a new local first (fuzz seed 4601: an If branch's t1 =
// LogSoftmax(t0, 2) read the t0 that t0 = Relu(t0) had overwritten).
func (x *importer) sequential(as []assign) []string {
	var pre, lines []string
	for i := range as {
		for _, prev := range as[:i] {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(prev.target) + `\b`).MatchString(as[i].expr) {
				tmp := x.newName(as[i].target + "_next")
				pre = append(pre, tmp+" := "+as[i].expr)
				as[i].expr = tmp
				break
			}
		}
	}
	for _, a := range as {
		lines = append(lines, a.target+" = "+a.expr)
	}
	return append(pre, lines...)
}

// passThrough is the value of an op that passes v through (Identity, a
// no-op Cast, Reshape or Transpose, a Sum of one input, …): a copy of v
// that is not a result and is an alias. A checked v whose evaluation is
// pending (read once, so by this op alone) is the copy's to evaluate
// now: v is marked read, so that flush does not declare it as well, and
// the copy is bound (and declared or kept pending) in its place (fuzz
// seed 2750: cnt = CheckedRem(4, 5) after an unused v := CheckedRem(4,
// 5)).
func passThrough(v *val) *val {
	c := *v
	c.result, c.alias = false, true
	if v.checked && !v.isVar {
		v.used = true
	}
	return &c
}

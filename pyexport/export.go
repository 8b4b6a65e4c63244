package pyexport

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

// Format is the framework an exported module is written for.
type Format string

// The formats.
const (
	// Torch is a PyTorch module: torch.Tensor values, torch ops, type
	// annotations TorchScript accepts.
	Torch Format = "torch"
	// NumPy is a NumPy module: float32 arrays, NumPy ufuncs, small
	// softmax/log_softmax/sigmoid helpers as a NumPy user writes them.
	NumPy Format = "numpy"
)

// ErrExport is wrapped by every error of Export.
var ErrExport = errors.New("python export")

// Options say what to export and what the header says.
type Options struct {
	Format Format
	// Funcs are the functions to export, in this order (nil: every
	// function of the program, in source order).
	Funcs []string
	// Source is the .rx file (or catalog scenario) as the user named it;
	// Version is rxeq's version. Both go into the header.
	Source  string
	Version string
	// Float64 writes a NumPy module that computes in float64 (np.float64
	// scalars; the caller passes float64 arrays): the reference of a
	// reproducer (Repro). Only with Format NumPy.
	Float64 bool
}

// Module is an exported Python module.
type Module struct {
	// Source is the module's text (UTF-8, ASCII in practice: program text
	// is escaped).
	Source []byte
	// Names maps each exported .rx function to its Python function's name
	// (the same unless the name had to be mangled; see the package doc).
	Names map[string]string
}

// Export writes the functions of p as one Python module in opts.Format,
// deterministically.
func Export(p *ir.Program, opts Options) (*Module, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: no program", ErrExport)
	}
	if opts.Format != Torch && opts.Format != NumPy {
		return nil, fmt.Errorf("%w: unknown format %q (want %q or %q)", ErrExport, opts.Format, Torch, NumPy)
	}
	if opts.Float64 && opts.Format != NumPy {
		return nil, fmt.Errorf("%w: float64 is a NumPy option", ErrExport)
	}
	float := "np.float32"
	if opts.Float64 {
		float = "np.float64"
	}
	funcs := opts.Funcs
	if funcs == nil {
		for _, f := range p.Funcs {
			funcs = append(funcs, f.Name)
		}
	}
	var b strings.Builder
	writeHeader(&b, p, opts, funcs)
	names := map[string]string{}
	taken := map[string]bool{}
	for _, fn := range funcs {
		f := p.Func(fn)
		if f == nil {
			return nil, fmt.Errorf("%w: %s has no function %q", ErrExport, p.File, fn)
		}
		name := pyName(fn)
		for i := 1; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", pyName(fn), i)
		}
		taken[name] = true
		names[fn] = name
		src, err := emitFunc(f, name, opts.Format, float)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n\n")
		b.WriteString(src)
	}
	return &Module{Source: []byte(b.String()), Names: names}, nil
}

const torchPrelude = `import torch
from typing import Tuple


def i64(v: int) -> int:
    """v wrapped to int64, as rxeq's integer + - * wrap (Go's two's complement)."""
    if torch.jit.is_scripting():
        return v  # TorchScript's int is int64 already
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def checked_rem(a: int, b: int, func: str, lhs: str, pos: str) -> int:
    """a % b with Go's semantics (the sign of a); b == 0 raises rxeq's error."""
    # The division sits in an else branch: TorchScript folds a // b with
    # constant operands even behind a raise, and 7 // 0 is a SIGFPE.
    if b == 0:
        raise ZeroDivisionError(func + ": CheckedRem: division by zero (" + lhs + "=" + str(a) + ") at " + pos)
    elif b == -1:
        return 0
    else:
        q = a // b  # not a % b: TorchScript 1.13's int % overflows for large b (1 % (2**63 - 1) is -2**63)
        if q < 0 and q * b != a:
            q += 1
        return a - q * b


def checked_div(a: int, b: int, func: str, lhs: str, pos: str) -> int:
    """a / b truncated toward zero (Go's); b == 0 and MinInt64 / -1 raise rxeq's errors."""
    if b == 0:
        raise ZeroDivisionError(func + ": CheckedDiv: division by zero (" + lhs + "=" + str(a) + ") at " + pos)
    elif b == -1:
        if a == -9223372036854775807 - 1:
            raise OverflowError(func + ": CheckedDiv: integer overflow (" + lhs + "=" + str(a) + ", divisor -1) at " + pos)
        return -a
    else:
        q = a // b
        if q < 0 and q * b != a:
            q += 1
        return q
`

const numpyPrelude = `import numpy as np


def i64(v):
    """v wrapped to int64, as rxeq's integer + - * wrap (Go's two's complement)."""
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def checked_rem(a, b, func, lhs, pos):
    """a % b with Go's semantics (the sign of a); b == 0 raises rxeq's error."""
    if b == 0:
        raise ZeroDivisionError(func + ": CheckedRem: division by zero (" + lhs + "=" + str(a) + ") at " + pos)
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def checked_div(a, b, func, lhs, pos):
    """a / b truncated toward zero (Go's); b == 0 and MinInt64 / -1 raise rxeq's errors."""
    if b == 0:
        raise ZeroDivisionError(func + ": CheckedDiv: division by zero (" + lhs + "=" + str(a) + ") at " + pos)
    if b == -1 and a == -(1 << 63):
        raise OverflowError(func + ": CheckedDiv: integer overflow (" + lhs + "=" + str(a) + ", divisor -1) at " + pos)
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def sigmoid(x):
    return np.float32(1) / (np.float32(1) + np.exp(-x))


def softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis):
    s = x - np.max(x, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))
`

func writeHeader(b *strings.Builder, p *ir.Program, opts Options, funcs []string) {
	src := opts.Source
	if src == "" {
		src = p.File
	}
	ver := opts.Version
	if ver == "" {
		ver = "(unknown version)"
	}
	framework := map[Format]string{Torch: "PyTorch", NumPy: "NumPy"}[opts.Format]
	fmt.Fprintf(b, "# Code generated by rxeq %s from %s (rxeq export --format %s). DO NOT EDIT.\n", commentText(ver), commentText(src), opts.Format)
	b.WriteString("#\n")
	dtype := "float32"
	if opts.Float64 {
		dtype = "float64"
	}
	fmt.Fprintf(b, "# The scoring functions of %s written with %s, %s:\n", commentText(src), framework, dtype)
	for _, fn := range funcs {
		if f := p.Func(fn); f != nil {
			fmt.Fprintf(b, "#   %s\n", commentText(signature(f)))
		}
	}
	b.WriteString("# Integer scalars are Python ints; checked_rem and checked_div raise rxeq's errors.\n")
	b.WriteString("\n")
	if opts.Format == Torch {
		b.WriteString(torchPrelude)
	} else {
		if opts.Float64 {
			b.WriteString(strings.ReplaceAll(numpyPrelude, "np.float32", "np.float64"))
		} else {
			b.WriteString(numpyPrelude)
		}
	}
}

// signature prints a function's .rx signature on one line.
func signature(f *ir.Func) string {
	list := func(vs []*ir.Value) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.Name + " " + v.Type.String()
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s(%s) (%s)", f.Name, list(f.Params), list(f.Results))
}

// Python operator precedence, lowest first (only the levels used).
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precAdd
	precMul
	precUnary
	precAtom
)

// expr is an expression being built: its text and its precedence, and for
// a float literal its value (written as a Python float or as a tensor
// depending on where it is used).
type expr struct {
	text  string
	prec  int
	lit   bool
	f     float64
	reads []int // the variables (non-temps) the expression reads, by value ID
}

func atom(s string) expr { return expr{text: s, prec: precAtom} }

// readsOf is the union of the variables read by xs.
func readsOf(xs ...expr) []int {
	var out []int
	for _, x := range xs {
		for _, id := range x.reads {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// paren returns e's text, parenthesised when its precedence is below min.
func (e expr) paren(min int) string {
	if e.prec < min {
		return "(" + e.text + ")"
	}
	return e.text
}

// stmt is one Python statement: a line, or a block (for, if) with a body.
type stmt struct {
	line string
	body []stmt
	els  []stmt // if only
	isIf bool
}

// fnEmitter writes one function.
type fnEmitter struct {
	f       *ir.Func
	format  Format
	float   string         // np.float32 or np.float64
	names   map[int]string // values held in Python variables
	uses    map[int]int    // reads of each value
	pending map[int]expr   // temps to inline at their one use
	bound   map[int]float64
	loopOf  map[int]*ir.For // loop index -> its loop
	// lastArgs are the operands of the op compute built last (their reads
	// become the result's).
	lastArgs []expr
}

// fail aborts the export of a function with an error (recovered in
// emitFunc).
type exportError struct{ err error }

func fail(format string, args ...any) {
	panic(exportError{fmt.Errorf("%w: "+format, append([]any{ErrExport}, args...)...)})
}

func emitFunc(f *ir.Func, pyFn string, format Format, float string) (src string, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exportError)
			if !ok {
				panic(r)
			}
			src, err = "", e.err
		}
	}()
	e := &fnEmitter{f: f, format: format, float: float, names: map[int]string{}, uses: map[int]int{},
		pending: map[int]expr{}, bound: map[int]float64{}, loopOf: map[int]*ir.For{}}
	e.nameValues()
	ir.Walk(f.Body, func(in ir.Instr) {
		switch in := in.(type) {
		case *ir.Op:
			for _, a := range in.Args {
				e.uses[a.ID]++
			}
		case *ir.For:
			e.uses[in.Count.ID]++
			if in.Index != nil {
				e.loopOf[in.Index.ID] = in
			}
		case *ir.If:
			e.uses[in.Cond.ID]++
		}
	})
	var b strings.Builder
	params := make([]string, len(f.Params))
	for i, p := range f.Params {
		params[i] = e.names[p.ID]
		if format == Torch {
			params[i] += ": " + torchType(p.Type)
		}
	}
	ret := ""
	if format == Torch {
		rt := make([]string, len(f.Results))
		for i, r := range f.Results {
			rt[i] = torchType(r.Type)
		}
		if len(rt) == 1 {
			ret = " -> " + rt[0]
		} else {
			ret = " -> Tuple[" + strings.Join(rt, ", ") + "]"
		}
	}
	fmt.Fprintf(&b, "def %s(%s)%s:\n", pyFn, strings.Join(params, ", "), ret)
	fmt.Fprintf(&b, "    %s\n", pyString(signature(f)+", "+f.Pos))
	var body []stmt
	if format == Torch {
		body = append(body, e.predeclare()...)
	}
	body = append(body, e.block(f.Body)...)
	results := make([]string, len(f.Results))
	for i, r := range f.Results {
		results[i] = e.names[r.ID]
	}
	body = append(body, stmt{line: "return " + strings.Join(results, ", ")})
	writeStmts(&b, body, 1)
	return b.String(), nil
}

func torchType(t ir.Type) string {
	if t.IsIntScalar() {
		return "int"
	}
	return "torch.Tensor"
}

// nameValues gives every parameter, result, variable and loop index its
// Python name: params and results first, so they keep theirs.
func (e *fnEmitter) nameValues() {
	taken := map[string]bool{}
	give := func(v *ir.Value) {
		if _, ok := e.names[v.ID]; ok || v.Name == "" {
			return
		}
		base := pyName(v.Name)
		name := base
		for i := 1; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		taken[name] = true
		e.names[v.ID] = name
	}
	for _, v := range e.f.Params {
		give(v)
	}
	for _, v := range e.f.Results {
		give(v)
	}
	for _, v := range e.f.Values {
		if v.Kind != ir.Temp {
			give(v)
		}
	}
}

// predeclare gives a value to each result that is first assigned inside
// a loop: the .rx checker accepts it after a loop of a positive constant
// count, but TorchScript wants every variable defined on every path.
func (e *fnEmitter) predeclare() []stmt {
	var out []stmt
	for _, r := range e.f.Results {
		if firstWriteInLoop(e.f.Body, r, false) {
			init := "torch.empty(0)"
			if r.Type.IsIntScalar() {
				init = "0"
			}
			out = append(out, stmt{line: fmt.Sprintf("%s = %s  # assigned in the loop below; TorchScript needs a value on every path", e.names[r.ID], init)})
		}
	}
	return out
}

// firstWriteInLoop reports whether the first write of v in body (in
// source order) is inside a for loop.
func firstWriteInLoop(body []ir.Instr, v *ir.Value, inLoop bool) bool {
	found, res := false, false
	var walk func([]ir.Instr, bool)
	walk = func(list []ir.Instr, loop bool) {
		for _, in := range list {
			if found {
				return
			}
			switch in := in.(type) {
			case *ir.Op:
				if in.Dst == v {
					found, res = true, loop
				}
			case *ir.For:
				walk(in.Body, true)
			case *ir.If:
				walk(in.Then, loop)
				walk(in.Else, loop)
			}
		}
	}
	walk(body, inLoop)
	return res
}

func writeStmts(b *strings.Builder, list []stmt, depth int) {
	ind := strings.Repeat("    ", depth)
	if len(list) == 0 {
		b.WriteString(ind + "pass\n")
		return
	}
	for _, s := range list {
		b.WriteString(ind + s.line + "\n")
		if s.isIf || s.body != nil {
			writeStmts(b, s.body, depth+1)
		}
		for s.isIf && len(s.els) > 0 {
			if len(s.els) == 1 && s.els[0].isIf {
				s = s.els[0]
				b.WriteString(ind + "el" + s.line + "\n")
				writeStmts(b, s.body, depth+1)
				continue
			}
			b.WriteString(ind + "else:\n")
			writeStmts(b, s.els, depth+1)
			break
		}
	}
}

// block turns a list of instructions into statements.
func (e *fnEmitter) block(list []ir.Instr) []stmt {
	out := []stmt{}
	for i := 0; i < len(list); i++ {
		switch in := list[i].(type) {
		case *ir.Op:
			// a && b and a || b, lowered as `t = a; if t { t = b }` (or
			// the else branch): written back as Python's and/or.
			if in.Kind == ir.Copy && in.Dst.Kind == ir.Var && in.Dst.Name == "" && i+1 < len(list) {
				if br, ok := list[i+1].(*ir.If); ok && br.Cond == in.Dst && e.shortCircuit(in, br) {
					i++
					continue
				}
			}
			out = append(out, e.op(in)...)
		case *ir.For:
			count := e.use(in.Count)
			idx := "_"
			if in.Index != nil {
				idx = e.names[in.Index.ID]
			}
			out = append(out, stmt{line: fmt.Sprintf("for %s in range(%s):", idx, count.text), body: e.block(in.Body)})
		case *ir.If:
			cond := e.use(in.Cond)
			out = append(out, stmt{line: "if " + cond.text + ":", isIf: true, body: e.block(in.Then), els: e.block(in.Else)})
		default:
			fail("%s: unknown instruction %T", e.f.Name, in)
		}
	}
	return out
}

// shortCircuit recognises the lowering of && and || whose right operand
// is pure (temps only) and records the combined expression for t.
func (e *fnEmitter) shortCircuit(cp *ir.Op, br *ir.If) bool {
	rhs, and := br.Then, true
	if len(br.Then) == 0 {
		rhs, and = br.Else, false
	} else if len(br.Else) != 0 {
		return false
	}
	if len(rhs) == 0 {
		return false
	}
	last, ok := rhs[len(rhs)-1].(*ir.Op)
	if !ok || last.Kind != ir.Copy || last.Dst != cp.Dst {
		return false
	}
	left := e.use(cp.Args[0])
	// The right operand's instructions must all inline into one
	// expression; anything that would need a statement cannot move into
	// an and/or.
	stmts := e.block(rhs[:len(rhs)-1])
	if len(stmts) != 0 {
		fail("%s: the right operand of && or || at %s needs statements", e.f.Name, br.Pos)
	}
	right := e.use(last.Args[0])
	if and {
		e.pending[cp.Dst.ID] = expr{text: left.paren(precAnd) + " and " + right.paren(precAnd+1), prec: precAnd, reads: readsOf(left, right)}
	} else {
		e.pending[cp.Dst.ID] = expr{text: left.paren(precOr) + " or " + right.paren(precOr+1), prec: precOr, reads: readsOf(left, right)}
	}
	return true
}

// use returns the expression reading v: an inlined temp, or its name.
func (e *fnEmitter) use(v *ir.Value) expr {
	if x, ok := e.pending[v.ID]; ok {
		delete(e.pending, v.ID)
		return x
	}
	if n, ok := e.names[v.ID]; ok {
		x := atom(n)
		if v.Kind != ir.Temp {
			x.reads = []int{v.ID}
		}
		return x
	}
	fail("%s: value %s is read before it is written", e.f.Name, v.Ref())
	return expr{}
}

// op turns one operation into statements, or records it for inlining.
// Before a variable is written, every pending expression that reads it
// is written to a temp variable: `return b, a` must read both before
// either result is stored.
func (e *fnEmitter) op(in *ir.Op) []stmt {
	var x expr
	if in.Kind == ir.Copy {
		x = e.use(in.Args[0])
		if in.Dst.Kind == ir.Temp {
			return e.define(in, x, in.Args[0].Kind == ir.Temp)
		}
		x = e.standalone(x, in.Dst.Type)
	} else {
		x = e.compute(in)
		x.reads = readsOf(append([]expr{x}, e.lastArgs...)...)
		if in.Dst.Kind == ir.Temp {
			return e.define(in, x, true)
		}
	}
	e.bound[in.Dst.ID] = huge
	out := e.flushReaders(in.Dst.ID)
	return append(out, stmt{line: e.names[in.Dst.ID] + " = " + x.text})
}

// flushReaders writes each pending expression that reads variable id to
// a temp variable, in the order they were defined.
func (e *fnEmitter) flushReaders(id int) []stmt {
	var ids []int
	for tid, x := range e.pending {
		if slices.Contains(x.reads, id) {
			ids = append(ids, tid)
		}
	}
	sort.Ints(ids)
	var out []stmt
	for _, tid := range ids {
		x := e.pending[tid]
		delete(e.pending, tid)
		name := fmt.Sprintf("_t%d", tid)
		e.names[tid] = name
		out = append(out, stmt{line: name + " = " + e.standaloneLit(x).text})
	}
	return out
}

// define records a temp's expression for inlining when it is read once
// (and may move to its reader), or writes it to a fresh variable.
func (e *fnEmitter) define(in *ir.Op, x expr, movable bool) []stmt {
	if movable && e.uses[in.Dst.ID] == 1 {
		e.pending[in.Dst.ID] = x
		return nil
	}
	name := fmt.Sprintf("_t%d", in.Dst.ID)
	e.names[in.Dst.ID] = name
	return []stmt{{line: name + " = " + e.standaloneLit(x).text}}
}

const huge = 1e30

// float literal rendering.

func floatText(f float64) expr {
	switch {
	case f != f:
		return atom(`float("nan")`)
	case math.IsInf(f, 1):
		return atom(`float("inf")`)
	case math.IsInf(f, -1):
		return expr{text: `-float("inf")`, prec: precUnary}
	}
	s := strconvFloat(f)
	if strings.HasPrefix(s, "-") {
		return expr{text: s, prec: precUnary}
	}
	return atom(s)
}

// standalone writes x where it stands alone as a value of type t: a float
// literal becomes a tensor (a float32 scalar).
func (e *fnEmitter) standalone(x expr, _ ir.Type) expr { return e.standaloneLit(x) }

func (e *fnEmitter) standaloneLit(x expr) expr {
	if !x.lit {
		return x
	}
	return e.scalarTensor(x.f)
}

func (e *fnEmitter) scalarTensor(f float64) expr {
	if e.format == Torch {
		return atom("torch.tensor(" + floatText(f).text + ")")
	}
	return atom(e.float + "(" + floatText(f).text + ")")
}

// operand writes a float literal operand next to other, the other
// operand (of rank otherRank): a Python float where the framework keeps
// float32 with it, else a float32 scalar.
func (e *fnEmitter) operand(x expr, other expr, otherRank int) expr {
	if !x.lit {
		return x
	}
	if e.format == Torch {
		if other.lit {
			return e.scalarTensor(x.f)
		}
		return floatText(x.f)
	}
	if otherRank == 0 || x.f != x.f || x.f > 3.4028234663852886e38 || x.f < -3.4028234663852886e38 {
		return e.scalarTensor(x.f)
	}
	return floatText(x.f)
}

func (e *fnEmitter) call(fn string, args ...string) expr {
	return atom(fn + "(" + strings.Join(args, ", ") + ")")
}

var torchUnary = map[ir.OpKind]string{ir.Tanh: "torch.tanh", ir.Exp: "torch.exp", ir.Log: "torch.log",
	ir.Sigmoid: "torch.sigmoid", ir.Relu: "torch.relu", ir.Abs: "torch.abs", ir.Sqrt: "torch.sqrt"}
var numpyUnary = map[ir.OpKind]string{ir.Tanh: "np.tanh", ir.Exp: "np.exp", ir.Log: "np.log",
	ir.Sigmoid: "sigmoid", ir.Abs: "np.abs", ir.Sqrt: "np.sqrt"}
var binText = map[ir.OpKind]string{ir.Add: " + ", ir.Sub: " - ", ir.Mul: " * ", ir.Div: " / ",
	ir.IAdd: " + ", ir.ISub: " - ", ir.IMul: " * "}
var binPrec = map[ir.OpKind]int{ir.Add: precAdd, ir.Sub: precAdd, ir.Mul: precMul, ir.Div: precMul,
	ir.IAdd: precAdd, ir.ISub: precAdd, ir.IMul: precMul}
var cmpText = map[ir.OpKind]string{ir.Eq: " == ", ir.Ne: " != ", ir.Lt: " < ", ir.Le: " <= ", ir.Gt: " > ", ir.Ge: " >= "}

// compute builds the expression of a non-copy op.
func (e *fnEmitter) compute(in *ir.Op) expr {
	args := make([]expr, len(in.Args))
	for i, a := range in.Args {
		args[i] = e.use(a)
	}
	e.lastArgs = args
	torch := e.format == Torch
	rank := func(i int) int { return in.Args[i].Type.Rank() }
	switch in.Kind {
	case ir.ConstF:
		return expr{text: floatText(in.F).text, prec: floatText(in.F).prec, lit: true, f: in.F}
	case ir.ConstI:
		e.bound[in.Dst.ID] = abs(float64(in.I))
		return intText(in.I)
	case ir.Add, ir.Sub, ir.Mul, ir.Div:
		p := binPrec[in.Kind]
		l := e.operand(args[0], args[1], rank(1))
		r := e.operand(args[1], args[0], rank(0))
		return expr{text: l.paren(p) + binText[in.Kind] + r.paren(p+1), prec: p}
	case ir.Neg:
		x := e.standalone(args[0], in.Args[0].Type)
		return expr{text: "-" + x.paren(precUnary+1), prec: precUnary}
	case ir.Maximum, ir.Minimum:
		name := map[ir.OpKind]string{ir.Maximum: "maximum", ir.Minimum: "minimum"}[in.Kind]
		if torch {
			return e.call("torch."+name, e.standalone(args[0], in.Args[0].Type).text, e.standalone(args[1], in.Args[1].Type).text)
		}
		return e.call("np."+name, e.operand(args[0], args[1], rank(1)).text, e.operand(args[1], args[0], rank(0)).text)
	case ir.Tanh, ir.Exp, ir.Log, ir.Sigmoid, ir.Relu, ir.Abs, ir.Sqrt:
		x := e.standalone(args[0], in.Args[0].Type)
		if torch {
			return e.call(torchUnary[in.Kind], x.text)
		}
		if in.Kind == ir.Relu {
			if in.Args[0].Type.Rank() == 0 {
				return e.call("np.maximum", x.text, e.float+"(0)")
			}
			return e.call("np.maximum", x.text, "0")
		}
		return e.call(numpyUnary[in.Kind], x.text)
	case ir.MatMul:
		return expr{text: args[0].paren(precMul) + " @ " + args[1].paren(precMul+1), prec: precMul}
	case ir.Transpose:
		return atom(args[0].paren(precAtom) + ".T")
	case ir.Softmax, ir.LogSoftmax:
		name := map[ir.OpKind]string{ir.Softmax: "softmax", ir.LogSoftmax: "log_softmax"}[in.Kind]
		if torch {
			return e.call("torch."+name, args[0].text, fmt.Sprint(in.Axis))
		}
		return e.call(name, args[0].text, fmt.Sprint(in.Axis))
	case ir.Sum, ir.Mean, ir.Max:
		if torch {
			name := map[ir.OpKind]string{ir.Sum: "torch.sum", ir.Mean: "torch.mean", ir.Max: "torch.amax"}[in.Kind]
			if in.KeepDims {
				return e.call(name, args[0].text, fmt.Sprint(in.Axis), "keepdim=True")
			}
			return e.call(name, args[0].text, fmt.Sprint(in.Axis))
		}
		name := map[ir.OpKind]string{ir.Sum: "np.sum", ir.Mean: "np.mean", ir.Max: "np.max"}[in.Kind]
		if in.KeepDims {
			return e.call(name, args[0].text, fmt.Sprintf("axis=%d", in.Axis), "keepdims=True")
		}
		return e.call(name, args[0].text, fmt.Sprintf("axis=%d", in.Axis))
	case ir.Argmax:
		var x expr
		switch {
		case torch && in.KeepDims:
			x = e.call("torch.argmax", args[0].text, fmt.Sprint(in.Axis), "keepdim=True")
		case torch:
			x = e.call("torch.argmax", args[0].text, fmt.Sprint(in.Axis))
		case in.KeepDims:
			x = e.call("np.argmax", args[0].text, fmt.Sprintf("axis=%d", in.Axis), "keepdims=True")
		default:
			x = e.call("np.argmax", args[0].text, fmt.Sprintf("axis=%d", in.Axis))
		}
		if in.Dst.Type.Rank() == 0 {
			// A class index used as an integer scalar: a Python int.
			e.bound[in.Dst.ID] = 1 << 40
			return e.call("int", x.text)
		}
		return x
	case ir.IAdd, ir.ISub, ir.IMul:
		p := binPrec[in.Kind]
		x := expr{text: args[0].paren(p) + binText[in.Kind] + args[1].paren(p+1), prec: p}
		a, b := e.boundOf(in.Args[0]), e.boundOf(in.Args[1])
		bd := a + b
		if in.Kind == ir.IMul {
			bd = a * b
		}
		return e.wrap(in, x, bd)
	case ir.INeg:
		x := expr{text: "-" + args[0].paren(precUnary+1), prec: precUnary}
		return e.wrap(in, x, e.boundOf(in.Args[0]))
	case ir.CheckedRem, ir.CheckedDiv:
		s := in.Site
		if s == nil {
			fail("%s: %s without a site", e.f.Name, in.Kind)
		}
		name := map[ir.OpKind]string{ir.CheckedRem: "checked_rem", ir.CheckedDiv: "checked_div"}[in.Kind]
		bd := e.boundOf(in.Args[0])
		if in.Kind == ir.CheckedRem && in.Args[1].Kind == ir.Temp && e.bound[in.Args[1].ID] > 0 && e.bound[in.Args[1].ID] < bd {
			bd = e.bound[in.Args[1].ID]
		}
		e.bound[in.Dst.ID] = bd
		return e.call(name, args[0].text, args[1].text, pyString(s.Func), pyString(s.LHS), pyString(s.Pos))
	case ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge:
		return expr{text: args[0].paren(precCmp+1) + cmpText[in.Kind] + args[1].paren(precCmp+1), prec: precCmp}
	case ir.Not:
		return expr{text: "not " + args[0].paren(precNot), prec: precNot}
	}
	fail("%s: op %s is not supported by the Python export", e.f.Name, in.Kind)
	return expr{}
}

// boundOf is a bound on |v| for an int64 scalar, or huge when unknown.
func (e *fnEmitter) boundOf(v *ir.Value) float64 {
	if v.Kind == ir.LoopIndex {
		if loop := e.loopOf[v.ID]; loop != nil {
			if c, ok := e.bound[loop.Count.ID]; ok && loop.Count.Kind == ir.Temp {
				return c
			}
		}
		// A loop cannot practically run 2^40 times.
		return 1 << 40
	}
	if v.Kind == ir.Temp {
		if b, ok := e.bound[v.ID]; ok {
			return b
		}
	}
	return huge
}

// wrap writes i64(x) unless the bound bd of the result rules out int64
// overflow.
func (e *fnEmitter) wrap(in *ir.Op, x expr, bd float64) expr {
	if bd <= 1<<62 {
		e.bound[in.Dst.ID] = bd
		return x
	}
	e.bound[in.Dst.ID] = 1 << 63
	return e.call("i64", x.text)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func intText(v int64) expr {
	switch {
	case v == -1<<63:
		return expr{text: "-9223372036854775807 - 1", prec: precAdd}
	case v < 0:
		return expr{text: fmt.Sprint(v), prec: precUnary}
	}
	return atom(fmt.Sprint(v))
}

func strconvFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// ModuleFileName is the file name `rxeq export` gives the module of the
// program in file: its base name without .rx, made a Python module name,
// with the format: reference_torch.py.
func ModuleFileName(file string, format Format) string {
	base := filepath.Base(file)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	for _, r := range base {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "rx_" + name
	}
	return name + "_" + string(format) + ".py"
}

package pyexport

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/internal/codegen"
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
	funcs := codegen.Funcs(p, opts.Funcs)
	var b strings.Builder
	writeHeader(&b, p, opts, funcs)
	names := map[string]string{}
	err := codegen.EachFunc(p, funcs, pyName, ErrExport, func(f *ir.Func, name string) error {
		names[f.Name] = name
		src, err := emitFunc(f, name, opts.Format, float)
		if err != nil {
			return err
		}
		b.WriteString("\n\n")
		b.WriteString(src)
		return nil
	})
	if err != nil {
		return nil, err
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
	src, ver := codegen.Provenance(p, opts.Source, opts.Version)
	framework := map[Format]string{Torch: "PyTorch", NumPy: "NumPy"}[opts.Format]
	fmt.Fprintf(b, "# Code generated by rxeq %s from %s (rxeq export --format %s). DO NOT EDIT.\n", CommentText(ver), CommentText(src), opts.Format)
	b.WriteString("#\n")
	dtype := "float32"
	if opts.Float64 {
		dtype = "float64"
	}
	fmt.Fprintf(b, "# The scoring functions of %s written with %s, %s:\n", CommentText(src), framework, dtype)
	for _, fn := range funcs {
		if f := p.Func(fn); f != nil {
			fmt.Fprintf(b, "#   %s\n", CommentText(codegen.Signature(f)))
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

// expr is codegen's expression; stmt its statement.
type (
	expr = codegen.Expr
	stmt = codegen.Stmt
)

func atom(s string) expr { return codegen.Atom(s) }

// layout is Python's: four spaces, pass in an empty block, elif.
var layout = codegen.Layout{Indent: "    ", Empty: "pass", ElseIf: "el", Else: "else:"}

// fnEmitter is the codegen.Emitter of one Python function.
type fnEmitter struct {
	format Format
	float  string // np.float32 or np.float64
	bound  map[int]float64
}

func emitFunc(f *ir.Func, pyFn string, format Format, float string) (string, error) {
	e := &fnEmitter{format: format, float: float, bound: map[int]float64{}}
	w := codegen.New(f, e, ErrExport)
	var b strings.Builder
	params := make([]string, len(f.Params))
	for i, p := range f.Params {
		params[i] = w.Name(p)
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
	fmt.Fprintf(&b, "    %s\n", pyString(codegen.Signature(f)+", "+f.Pos))
	var body []stmt
	if format == Torch {
		body = append(body, predeclare(w)...)
	}
	list, err := w.Body()
	if err != nil {
		return "", err
	}
	body = append(body, list...)
	results := make([]string, len(f.Results))
	for i, r := range f.Results {
		results[i] = w.Name(r)
	}
	body = append(body, stmt{Line: "return " + strings.Join(results, ", ")})
	layout.Write(&b, body, 1)
	return b.String(), nil
}

func torchType(t ir.Type) string {
	if t.IsIntScalar() {
		return "int"
	}
	return "torch.Tensor"
}

// Ident is v's Python name; a variable without a .rx name (the lowering
// of && and ||) gets none.
func (e *fnEmitter) Ident(v *ir.Value) string {
	if v.Name == "" {
		return ""
	}
	return pyName(v.Name)
}

// predeclare gives a value to each result that is first assigned inside
// a loop: the .rx checker accepts it after a loop of a positive constant
// count, but TorchScript wants every variable defined on every path.
func predeclare(w *codegen.Walker) []stmt {
	var out []stmt
	f := w.Func()
	for _, r := range f.Results {
		if firstWriteInLoop(f.Body, r, false) {
			init := "torch.empty(0)"
			if r.Type.IsIntScalar() {
				init = "0"
			}
			out = append(out, stmt{Line: fmt.Sprintf("%s = %s  # assigned in the loop below; TorchScript needs a value on every path", w.Name(r), init)})
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

// For is range(count) over the index, or _.
func (e *fnEmitter) For(w *codegen.Walker, count expr, index *ir.Value) ([]stmt, string) {
	idx := "_"
	if index != nil {
		idx = w.Name(index)
	}
	return nil, fmt.Sprintf("for %s in range(%s):", idx, count.Text)
}

// If is an if statement's header.
func (e *fnEmitter) If(cond expr) string { return "if " + cond.Text + ":" }

// Logic is Python's and/or.
func (e *fnEmitter) Logic(and bool, left, right expr) expr {
	if and {
		return expr{Text: left.Paren(precAnd) + " and " + right.Paren(precAnd+1), Prec: precAnd}
	}
	return expr{Text: left.Paren(precOr) + " or " + right.Paren(precOr+1), Prec: precOr}
}

// Assign is a Python assignment.
func (e *fnEmitter) Assign(name string, x expr) string { return name + " = " + x.Text }

const huge = 1e30

// float literal rendering.

func floatText(f float64) expr {
	switch {
	case f != f:
		return atom(`float("nan")`)
	case math.IsInf(f, 1):
		return atom(`float("inf")`)
	case math.IsInf(f, -1):
		return expr{Text: `-float("inf")`, Prec: precUnary}
	}
	s := strconvFloat(f)
	if strings.HasPrefix(s, "-") {
		return expr{Text: s, Prec: precUnary}
	}
	return atom(s)
}

// Standalone writes x where it stands alone as a value: a float literal
// becomes a tensor (a float32 scalar).
func (e *fnEmitter) Standalone(x expr) expr {
	if !x.Lit {
		return x
	}
	return e.scalarTensor(x.F)
}

func (e *fnEmitter) scalarTensor(f float64) expr {
	if e.format == Torch {
		return atom("torch.tensor(" + floatText(f).Text + ")")
	}
	return atom(e.float + "(" + floatText(f).Text + ")")
}

// operand writes a float literal operand next to other, the other
// operand (of rank otherRank): a Python float where the framework keeps
// float32 with it, else a float32 scalar.
func (e *fnEmitter) operand(x expr, other expr, otherRank int) expr {
	if !x.Lit {
		return x
	}
	if e.format == Torch {
		if other.Lit {
			return e.scalarTensor(x.F)
		}
		return floatText(x.F)
	}
	if otherRank == 0 || x.F != x.F || x.F > 3.4028234663852886e38 || x.F < -3.4028234663852886e38 {
		return e.scalarTensor(x.F)
	}
	return floatText(x.F)
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

// Op builds the expression of a non-copy op.
func (e *fnEmitter) Op(w *codegen.Walker, in *ir.Op, args []expr) expr {
	torch := e.format == Torch
	rank := func(i int) int { return in.Args[i].Type.Rank() }
	switch in.Kind {
	case ir.ConstF:
		return expr{Text: floatText(in.F).Text, Prec: floatText(in.F).Prec, Lit: true, F: in.F}
	case ir.ConstI:
		e.bound[in.Dst.ID] = abs(float64(in.I))
		return intText(in.I)
	case ir.Add, ir.Sub, ir.Mul, ir.Div:
		p := binPrec[in.Kind]
		l := e.operand(args[0], args[1], rank(1))
		r := e.operand(args[1], args[0], rank(0))
		return expr{Text: l.Paren(p) + binText[in.Kind] + r.Paren(p+1), Prec: p}
	case ir.Neg:
		x := e.Standalone(args[0])
		return expr{Text: "-" + x.Paren(precUnary+1), Prec: precUnary}
	case ir.Maximum, ir.Minimum:
		name := map[ir.OpKind]string{ir.Maximum: "maximum", ir.Minimum: "minimum"}[in.Kind]
		if torch {
			return e.call("torch."+name, e.Standalone(args[0]).Text, e.Standalone(args[1]).Text)
		}
		return e.call("np."+name, e.operand(args[0], args[1], rank(1)).Text, e.operand(args[1], args[0], rank(0)).Text)
	case ir.Tanh, ir.Exp, ir.Log, ir.Sigmoid, ir.Relu, ir.Abs, ir.Sqrt:
		x := e.Standalone(args[0])
		if torch {
			return e.call(torchUnary[in.Kind], x.Text)
		}
		if in.Kind == ir.Relu {
			if in.Args[0].Type.Rank() == 0 {
				return e.call("np.maximum", x.Text, e.float+"(0)")
			}
			return e.call("np.maximum", x.Text, "0")
		}
		return e.call(numpyUnary[in.Kind], x.Text)
	case ir.MatMul:
		return expr{Text: args[0].Paren(precMul) + " @ " + args[1].Paren(precMul+1), Prec: precMul}
	case ir.Transpose:
		return atom(args[0].Paren(precAtom) + ".T")
	case ir.Softmax, ir.LogSoftmax:
		name := map[ir.OpKind]string{ir.Softmax: "softmax", ir.LogSoftmax: "log_softmax"}[in.Kind]
		if torch {
			return e.call("torch."+name, args[0].Text, fmt.Sprint(in.Axis))
		}
		return e.call(name, args[0].Text, fmt.Sprint(in.Axis))
	case ir.Sum, ir.Mean, ir.Max:
		if torch {
			name := map[ir.OpKind]string{ir.Sum: "torch.sum", ir.Mean: "torch.mean", ir.Max: "torch.amax"}[in.Kind]
			if in.KeepDims {
				return e.call(name, args[0].Text, fmt.Sprint(in.Axis), "keepdim=True")
			}
			return e.call(name, args[0].Text, fmt.Sprint(in.Axis))
		}
		name := map[ir.OpKind]string{ir.Sum: "np.sum", ir.Mean: "np.mean", ir.Max: "np.max"}[in.Kind]
		if in.KeepDims {
			return e.call(name, args[0].Text, fmt.Sprintf("axis=%d", in.Axis), "keepdims=True")
		}
		return e.call(name, args[0].Text, fmt.Sprintf("axis=%d", in.Axis))
	case ir.Argmax:
		var x expr
		switch {
		case torch && in.KeepDims:
			x = e.call("torch.argmax", args[0].Text, fmt.Sprint(in.Axis), "keepdim=True")
		case torch:
			x = e.call("torch.argmax", args[0].Text, fmt.Sprint(in.Axis))
		case in.KeepDims:
			x = e.call("np.argmax", args[0].Text, fmt.Sprintf("axis=%d", in.Axis), "keepdims=True")
		default:
			x = e.call("np.argmax", args[0].Text, fmt.Sprintf("axis=%d", in.Axis))
		}
		if in.Dst.Type.Rank() == 0 {
			// A class index used as an integer scalar: a Python int.
			e.bound[in.Dst.ID] = 1 << 40
			return e.call("int", x.Text)
		}
		return x
	case ir.IAdd, ir.ISub, ir.IMul:
		p := binPrec[in.Kind]
		x := expr{Text: args[0].Paren(p) + binText[in.Kind] + args[1].Paren(p+1), Prec: p}
		a, b := e.boundOf(w, in.Args[0]), e.boundOf(w, in.Args[1])
		bd := a + b
		if in.Kind == ir.IMul {
			bd = a * b
		}
		return e.wrap(in, x, bd)
	case ir.INeg:
		x := expr{Text: "-" + args[0].Paren(precUnary+1), Prec: precUnary}
		return e.wrap(in, x, e.boundOf(w, in.Args[0]))
	case ir.CheckedRem, ir.CheckedDiv:
		s := in.Site
		name := map[ir.OpKind]string{ir.CheckedRem: "checked_rem", ir.CheckedDiv: "checked_div"}[in.Kind]
		bd := e.boundOf(w, in.Args[0])
		if in.Kind == ir.CheckedRem && in.Args[1].Kind == ir.Temp && e.bound[in.Args[1].ID] > 0 && e.bound[in.Args[1].ID] < bd {
			bd = e.bound[in.Args[1].ID]
		}
		e.bound[in.Dst.ID] = bd
		return e.call(name, args[0].Text, args[1].Text, pyString(s.Func), pyString(s.LHS), pyString(s.Pos))
	case ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge:
		return expr{Text: args[0].Paren(precCmp+1) + cmpText[in.Kind] + args[1].Paren(precCmp+1), Prec: precCmp}
	case ir.Not:
		return expr{Text: "not " + args[0].Paren(precNot), Prec: precNot}
	}
	w.Fail("%s: op %s is not supported by the Python export", w.Func().Name, in.Kind)
	return expr{}
}

// boundOf is a bound on |v| for an int64 scalar, or huge when unknown.
func (e *fnEmitter) boundOf(w *codegen.Walker, v *ir.Value) float64 {
	if v.Kind == ir.LoopIndex {
		if loop := w.LoopOf(v); loop != nil {
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
	return e.call("i64", x.Text)
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
		return expr{Text: "-9223372036854775807 - 1", Prec: precAdd}
	case v < 0:
		return expr{Text: fmt.Sprint(v), Prec: precUnary}
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
	name := codegen.FileStem(file)
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "rx_" + name
	}
	return name + "_" + string(format) + ".py"
}

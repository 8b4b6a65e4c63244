package program

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// BatchSymbol returns the symbolic dimension that the batch size binds when
// the function runs as a scenario: the first symbolic dimension of the
// first parameter that has one (parameters in order, each one's dims from
// the outside in), or "" when the function has none.
func (f *Func) BatchSymbol() string {
	for _, p := range f.Params {
		for _, d := range p.Type.Shape {
			if d.IsSym() {
				return d.Sym
			}
		}
	}
	return ""
}

// checkSizes reports every shape in the file's functions that holds more
// than tensor.MaxElements elements (2^60 - 1, so that its size in bytes at
// 8 bytes per element, the widest, fits in int64) when the batch symbol is
// the largest of //rx:batches (1 without it, as the runner's default) and
// any other symbol is 1. Parameters and results are reported where they
// are declared; in a body, only the expression where an overflow first
// appears is, not every expression built from it, and a type is reported
// once per function.
func (c *checker) checkSizes() {
	batch := int64(1)
	for _, b := range c.file.Batches {
		batch = max(batch, int64(b))
	}
	for _, fn := range c.file.Funcs {
		s := &sizeChecker{checker: c, batchSym: fn.BatchSymbol(), batch: batch, bad: map[*Var]bool{}, reported: map[string]bool{}}
		for _, v := range fn.Params {
			s.checkVar(v, "parameter")
		}
		for _, v := range fn.Results {
			s.checkVar(v, "result")
		}
		s.stmts(fn.Body)
	}
}

type sizeChecker struct {
	*checker
	batchSym string
	batch    int64
	bad      map[*Var]bool   // variables already reported (or built from a reported value)
	reported map[string]bool // types already reported: one error per too-large type
}

func (s *sizeChecker) checkVar(v *Var, what string) {
	if msg := s.problem(v.Type, what+" "+v.Name); msg != "" {
		s.errorAt(v.Pos, "%s", msg)
		s.bad[v] = true
	}
}

func (s *sizeChecker) stmts(body []Stmt) {
	for _, st := range body {
		switch st := st.(type) {
		case *Assign:
			if s.expr(st.Value) {
				s.bad[st.Var] = true
			}
		case *For:
			s.stmts(st.Body)
		case *If:
			s.stmts(st.Then)
			s.stmts(st.Else)
		case *Return:
			for _, v := range st.Values {
				s.expr(v)
			}
		}
	}
}

// expr checks e and its operands and reports whether e's shape is too
// large (reported here or below).
func (s *sizeChecker) expr(e Expr) bool {
	var what string
	switch e := e.(type) {
	case *VarRef:
		return s.bad[e.Var]
	case *Unary:
		if s.expr(e.X) {
			return true
		}
		what = "the result of unary -"
	case *Binary:
		x, y := s.expr(e.X), s.expr(e.Y)
		if x || y {
			return true
		}
		what = "the result of " + binaryOpText[e.Op]
	case *Call:
		bad := false
		for _, a := range e.Args {
			bad = s.expr(a) || bad
		}
		if bad {
			return true
		}
		what = "the result of " + e.Builtin.String()
	default:
		return false
	}
	if msg := s.problem(e.Type(), what); msg != "" {
		s.errorAt(e.Pos(), "%s", msg)
		return true
	}
	return false
}

var binaryOpText = map[BinaryOp]string{Add: "+", Sub: "-", Mul: "*", Div: "/"}

// problem returns the message for a type whose shape is too large, or "".
func (s *sizeChecker) problem(t ir.Type, what string) string {
	key := t.String()
	if len(t.Shape) == 0 || s.reported[key] {
		return ""
	}
	dims := make([]string, len(t.Shape))
	var others []string
	n, over, log, hasBatch := int64(1), false, 0.0, false
	for i, d := range t.Shape {
		v := d.Size
		if d.IsSym() {
			if d.Sym == s.batchSym {
				v, hasBatch = s.batch, true
			} else {
				v = 1
				others = append(others, d.Sym)
			}
		}
		dims[i] = strconv.FormatInt(v, 10)
		log += math.Log2(float64(v))
		if !over && n > tensor.MaxElements/v {
			over = true
		}
		n *= v
	}
	if !over {
		return ""
	}
	s.reported[key] = true
	var at, fix string
	switch {
	case hasBatch && len(s.file.Batches) > 0:
		at = fmt.Sprintf(" at batch %s = %d (the largest of //rx:batches)", s.batchSym, s.batch)
		fix = " or the batches"
	case hasBatch:
		at = fmt.Sprintf(" at batch %s = 1 (the file has no //rx:batches)", s.batchSym)
	}
	if len(others) > 0 {
		at += fmt.Sprintf(" even with %s = 1", strings.Join(others, ", "))
	}
	return fmt.Sprintf("shape %s of %s has %s ≈ 2^%s elements%s: more than the 2^60 - 1 a tensor may hold, so that its size in bytes (8 per element) fits in int64; make its dimensions%s smaller",
		t, what, strings.Join(dims, " × "), ir.FormatLog2(log), at, fix)
}

package codegen

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/rextio/rxeq/program/ir"
)

// Expr is an expression being built: its text, its precedence in the
// host language (higher binds tighter), and for a float literal its
// value (Lit, F), so the emitter can write it as a plain number or as a
// tensor depending on where it is used. The walker records which
// variables an expression reads.
type Expr struct {
	Text string
	Prec int
	Lit  bool
	F    float64

	reads []int // the variables (non-temps) the expression reads, by value ID
}

// Atom is an expression that never needs parentheses.
func Atom(s string) Expr { return Expr{Text: s, Prec: math.MaxInt} }

// Paren returns x's text, parenthesised when its precedence is below min.
func (x Expr) Paren(min int) string {
	if x.Prec < min {
		return "(" + x.Text + ")"
	}
	return x.Text
}

// Stmt is one statement of the host language: a line, or a block header
// (a for or an if) with its body, and for an if its else branch.
type Stmt struct {
	Line string
	Body []Stmt
	Else []Stmt // an if's only
	IsIf bool
}

// Emitter writes the text of one language. The walker calls it while it
// walks one function; an Emitter may keep state for that function.
type Emitter interface {
	// Ident is the base identifier of a parameter, result, variable or
	// loop index ("" leaves the value without a name); the walker makes
	// it unique within the function by appending _1, _2, ...
	Ident(v *ir.Value) string
	// Op is the expression of a non-copy op whose operands are args, in
	// order (the walker has checked that a checked op has its site).
	Op(w *Walker, in *ir.Op, args []Expr) Expr
	// Standalone writes x where it stands alone as a value (assigned to
	// a variable): a float literal becomes a scalar tensor.
	Standalone(x Expr) Expr
	// Assign is the statement that stores x in variable name.
	Assign(name string, x Expr) string
	// For is the header of a loop of count iterations over index (nil:
	// the loop has no index), and the statements that must precede it.
	For(w *Walker, count Expr, index *ir.Value) (pre []Stmt, header string)
	// If is the header of a branch on cond.
	If(cond Expr) string
}

// LogicFolder is an Emitter that writes the lowering of a && b and
// a || b (`t = a; if t { t = b }`, or the else branch) back as one
// expression of its language. Without it the lowering is written as
// statements.
type LogicFolder interface {
	Emitter
	// Logic is left && right (and true) or left || right.
	Logic(and bool, left, right Expr) Expr
}

// Walker walks one function for one Emitter.
type Walker struct {
	f        *ir.Func
	em       Emitter
	errBase  error
	names    map[int]string // values held in variables
	uses     map[int]int    // reads of each value
	pending  map[int]Expr   // temps to inline at their one use
	loopOf   map[int]*ir.For
	declared []string
}

// New names the values of f and counts their reads. The errors of Body
// wrap errBase.
func New(f *ir.Func, em Emitter, errBase error) *Walker {
	w := &Walker{f: f, em: em, errBase: errBase, names: map[int]string{}, uses: map[int]int{},
		pending: map[int]Expr{}, loopOf: map[int]*ir.For{}}
	w.nameValues()
	ir.Walk(f.Body, func(in ir.Instr) {
		switch in := in.(type) {
		case *ir.Op:
			for _, a := range in.Args {
				w.uses[a.ID]++
			}
		case *ir.For:
			w.uses[in.Count.ID]++
			if in.Index != nil {
				w.loopOf[in.Index.ID] = in
			}
		case *ir.If:
			w.uses[in.Cond.ID]++
		}
	})
	return w
}

// Func is the function being walked.
func (w *Walker) Func() *ir.Func { return w.f }

// Name is the identifier of a value held in a variable ("" for one
// without).
func (w *Walker) Name(v *ir.Value) string { return w.names[v.ID] }

// LoopOf is the loop whose index is v, or nil.
func (w *Walker) LoopOf(v *ir.Value) *ir.For { return w.loopOf[v.ID] }

// Declared lists the function's local variables in the order they were
// named or declared: every variable and result (not the parameters and
// loop indices), then the temps the walk stored and the names passed to
// Declare. Complete once Body has returned.
func (w *Walker) Declared() []string { return w.declared }

// Declare adds a local variable the emitter introduces (once).
func (w *Walker) Declare(name string) {
	if !slices.Contains(w.declared, name) {
		w.declared = append(w.declared, name)
	}
}

// failure is the panic of Fail, recovered in Body.
type failure struct{ err error }

// Fail aborts the walk: Body returns the error, which wraps the errBase
// of New. Only for an Emitter's methods called by Body.
func (w *Walker) Fail(format string, args ...any) {
	panic(failure{fmt.Errorf("%w: "+format, append([]any{w.errBase}, args...)...)})
}

// Body is the function body as statements (without the return of its
// results, which is the language's).
func (w *Walker) Body() (list []Stmt, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(failure)
			if !ok {
				panic(r)
			}
			list, err = nil, e.err
		}
	}()
	return w.block(w.f.Body), nil
}

// nameValues gives every parameter, result, variable and loop index its
// identifier: params and results first, so they keep theirs.
func (w *Walker) nameValues() {
	taken := map[string]bool{}
	give := func(v *ir.Value) {
		if _, ok := w.names[v.ID]; ok {
			return
		}
		base := w.em.Ident(v)
		if base == "" {
			return
		}
		name := base
		for i := 1; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		taken[name] = true
		w.names[v.ID] = name
		if v.Kind != ir.Param && v.Kind != ir.LoopIndex {
			w.declared = append(w.declared, name)
		}
	}
	for _, v := range w.f.Params {
		give(v)
	}
	for _, v := range w.f.Results {
		give(v)
	}
	for _, v := range w.f.Values {
		if v.Kind != ir.Temp {
			give(v)
		}
	}
}

// block turns a list of instructions into statements.
func (w *Walker) block(list []ir.Instr) []Stmt {
	out := []Stmt{}
	folder, folds := w.em.(LogicFolder)
	for i := 0; i < len(list); i++ {
		switch in := list[i].(type) {
		case *ir.Op:
			if folds && in.Kind == ir.Copy && in.Dst.Kind == ir.Var && in.Dst.Name == "" && i+1 < len(list) {
				if br, ok := list[i+1].(*ir.If); ok && br.Cond == in.Dst && w.shortCircuit(folder, in, br) {
					i++
					continue
				}
			}
			out = append(out, w.op(in)...)
		case *ir.For:
			count := w.use(in.Count)
			pre, header := w.em.For(w, count, in.Index)
			out = append(out, pre...)
			out = append(out, Stmt{Line: header, Body: w.block(in.Body)})
		case *ir.If:
			cond := w.use(in.Cond)
			out = append(out, Stmt{Line: w.em.If(cond), IsIf: true, Body: w.block(in.Then), Else: w.block(in.Else)})
		default:
			w.Fail("%s: unknown instruction %T", w.f.Name, in)
		}
	}
	return out
}

// shortCircuit recognises the lowering of && and || whose right operand
// is pure (temps only) and records the combined expression for t.
func (w *Walker) shortCircuit(lf LogicFolder, cp *ir.Op, br *ir.If) bool {
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
	left := w.use(cp.Args[0])
	// The right operand's instructions must all inline into one
	// expression; anything that would need a statement cannot move into
	// an and/or.
	if stmts := w.block(rhs[:len(rhs)-1]); len(stmts) != 0 {
		w.Fail("%s: the right operand of && or || at %s needs statements", w.f.Name, br.Pos)
	}
	right := w.use(last.Args[0])
	x := lf.Logic(and, left, right)
	x.reads = readsOf(left, right)
	w.pending[cp.Dst.ID] = x
	return true
}

// use returns the expression reading v: an inlined temp, or its name.
func (w *Walker) use(v *ir.Value) Expr {
	if x, ok := w.pending[v.ID]; ok {
		delete(w.pending, v.ID)
		return x
	}
	if n, ok := w.names[v.ID]; ok {
		x := Atom(n)
		if v.Kind != ir.Temp {
			x.reads = []int{v.ID}
		}
		return x
	}
	w.Fail("%s: value %s is read before it is written", w.f.Name, v.Ref())
	return Expr{}
}

// op turns one operation into statements, or records it for inlining.
// Before a variable is written, every pending expression that reads it
// is stored in a temp variable.
func (w *Walker) op(in *ir.Op) []Stmt {
	var x Expr
	if in.Kind == ir.Copy {
		x = w.use(in.Args[0])
		if in.Dst.Kind == ir.Temp {
			return w.define(in, x, in.Args[0].Kind == ir.Temp)
		}
		x = w.em.Standalone(x)
	} else {
		args := make([]Expr, len(in.Args))
		for i, a := range in.Args {
			args[i] = w.use(a)
		}
		if (in.Kind == ir.CheckedRem || in.Kind == ir.CheckedDiv) && in.Site == nil {
			w.Fail("%s: %s without a site", w.f.Name, in.Kind)
		}
		x = w.em.Op(w, in, args)
		x.reads = readsOf(append([]Expr{x}, args...)...)
		if in.Dst.Kind == ir.Temp {
			return w.define(in, x, true)
		}
	}
	out := w.flushReaders(in.Dst.ID)
	return append(out, Stmt{Line: w.em.Assign(w.names[in.Dst.ID], x)})
}

// flushReaders stores each pending expression that reads variable id in
// a temp variable, in the order they were defined.
func (w *Walker) flushReaders(id int) []Stmt {
	var ids []int
	for tid, x := range w.pending {
		if slices.Contains(x.reads, id) {
			ids = append(ids, tid)
		}
	}
	sort.Ints(ids)
	var out []Stmt
	for _, tid := range ids {
		x := w.pending[tid]
		delete(w.pending, tid)
		out = append(out, w.store(tid, x))
	}
	return out
}

// define records a temp's expression for inlining when it is read once
// (and may move to its reader), or stores it in a fresh variable.
func (w *Walker) define(in *ir.Op, x Expr, movable bool) []Stmt {
	if movable && w.uses[in.Dst.ID] == 1 {
		w.pending[in.Dst.ID] = x
		return nil
	}
	return []Stmt{w.store(in.Dst.ID, x)}
}

// store assigns x to the temp variable _tN of value id.
func (w *Walker) store(id int, x Expr) Stmt {
	name := fmt.Sprintf("_t%d", id)
	w.names[id] = name
	w.Declare(name)
	return Stmt{Line: w.em.Assign(name, w.em.Standalone(x))}
}

// readsOf is the union of the variables read by xs.
func readsOf(xs ...Expr) []int {
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

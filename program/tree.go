package program

import (
	"go/ast"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// File is a parsed and checked .rx file: its directives and its functions
// as a typed tree. The oracle evaluates this tree directly; Lower turns it
// into the IR the other executors run.
type File struct {
	Name string // the file name as given to Parse
	Fset *token.FileSet
	AST  *ast.File

	Scenario    string      // //rx:scenario, "" if absent
	Batches     []int       // //rx:batches, nil if absent
	Seed        uint64      // //rx:seed
	HasSeed     bool        // whether //rx:seed was given
	Inputs      []Input     // //rx:input, in file order
	Tolerances  []Tolerance // //rx:tolerance, in file order
	ExpectError string      // //rx:expect-error text, "" if absent
	SignedZeros bool        // //rx:signed-zeros: the sign of a zero must match the oracle's
	Consts      []*Const    // package-level integer constants, in file order
	Funcs       []*Func     // in file order
}

// Func returns the function named name, or nil.
func (f *File) Func(name string) *Func {
	for _, fn := range f.Funcs {
		if fn.Name == name {
			return fn
		}
	}
	return nil
}

// Input returns the //rx:input distribution for a parameter and whether one
// was given.
func (f *File) Input(param string) (tensor.Dist, bool) {
	for _, in := range f.Inputs {
		if in.Param == param {
			return in.Dist, true
		}
	}
	return tensor.Dist{}, false
}

// Input is one //rx:input directive.
type Input struct {
	Param string
	Dist  tensor.Dist
	Pos   token.Position
}

// Tolerance is one //rx:tolerance directive: the float32 tolerance of an
// output, |got - want| <= ATol + RTol*|want| (when HasAbsRel), and at most
// ULP units in the last place between got and want rounded to float32
// (when HasULP). A directive gives either or both; both must then hold.
// With Executors (for=NAME,…) it applies to those executors only, in
// place of the directives without for= (see AppliesTo).
type Tolerance struct {
	Output     string
	RTol, ATol float64
	HasAbsRel  bool // rtol= or atol= was given
	ULP        int64
	HasULP     bool     // ulp= was given
	Executors  []string // for=: the executors it applies to; nil for every one
	Pos        token.Position
}

// AppliesTo reports whether t is a directive for executor: true for a
// directive without for= whatever the executor, and for one whose for=
// list names executor.
func (t Tolerance) AppliesTo(executor string) bool {
	return t.Executors == nil || slices.Contains(t.Executors, executor)
}

// Const is a package-level `const NAME = INT`.
type Const struct {
	Name  string
	Value int64
	Pos   token.Position
}

// Func is one checked scoring function.
type Func struct {
	Name    string
	Pos     token.Position
	Params  []*Var
	Results []*Var
	Body    []Stmt
	Locks   []Lock   // //rx:lock and //rx:lock-not inside the body, in order
	Skips   []Skip   // //rx:skip inside the body, in order
	Syms    []string // the free symbolic dimensions, in order of first appearance in Params

	symPos map[string]token.Position // where each symbol first appears
}

// Skip is one //rx:skip EXECUTOR[,EXECUTOR…] "reason" line: the named
// executors do not run the function, and each such case is reported as
// skipped with the reason. It is how a scenario that hits a documented
// difference of a framework stays in the catalog for every other
// executor, visibly.
type Skip struct {
	Executors []string
	Reason    string
	Pos       token.Position
}

// SkipFor returns the //rx:skip line of f that names executor, if any.
func (f *Func) SkipFor(executor string) (Skip, bool) {
	for _, s := range f.Skips {
		for _, e := range s.Executors {
			if e == executor {
				return s, true
			}
		}
	}
	return Skip{}, false
}

// ParamList returns the parameters as ir.BindInputs wants them.
func (f *Func) ParamList() []ir.ParamSpec {
	out := make([]ir.ParamSpec, len(f.Params))
	for i, p := range f.Params {
		out[i] = ir.ParamSpec{Name: p.Name, Type: p.Type}
	}
	return out
}

// LockKind says whether a lock check must match or must not.
type LockKind uint8

// The lock kinds.
const (
	LockMatch LockKind = iota + 1 // //rx:lock
	LockNot                       // //rx:lock-not
	LockNext                      // //rx:lock-next: on the line after the previous match
	LockSame                      // //rx:lock-same: on the previous match's line, after it
)

// String returns the directive's name: "lock", "lock-not", "lock-next"
// or "lock-same".
func (k LockKind) String() string {
	switch k {
	case LockNot:
		return "lock-not"
	case LockNext:
		return "lock-next"
	case LockSame:
		return "lock-same"
	}
	return "lock"
}

// Positive reports whether a check of kind k must match (every kind but
// LockNot); positive checks apply in order.
func (k LockKind) Positive() bool { return k != LockNot }

// Lock is one source-lock check written inside a function.
type Lock struct {
	Kind   LockKind
	Regexp bool   // `...` (RE2) rather than "..." (literal substring)
	Text   string // the unquoted pattern
	Pos    token.Position
}

// VarKind says how a variable was declared.
type VarKind uint8

// The kinds of variables.
const (
	ParamVar VarKind = iota + 1
	ResultVar
	LocalVar
	IndexVar
)

// Var is a declared name. Its Type never changes: reassignment keeps dtype
// and shape. ID is unique within the function.
type Var struct {
	Name string
	Kind VarKind
	Type ir.Type
	Pos  token.Position
	ID   int
}

// Stmt is a checked statement: *Assign, *For, *If or *Return.
type Stmt interface{ stmt() }

// Assign is `v := e` (Define) or `v = e`.
type Assign struct {
	Pos    token.Position
	Var    *Var
	Define bool
	Value  Expr
}

// For is `for i := range N` (Index nil for `for range N`). Count is an
// integer constant, an int64 scalar parameter or an int64 scalar local
// (a VarRef); it is read once, before the first iteration, so a body that
// assigns a local count changes the variable but not the number of
// trips. N <= 0 runs nothing.
type For struct {
	Pos   token.Position
	Index *Var
	Count Expr
	Body  []Stmt
}

// If is `if Cond { Then } else { Else }`; `else if` is an If alone in Else.
type If struct {
	Pos  token.Position
	Cond Expr // of dtype Bool
	Then []Stmt
	Else []Stmt
}

// Return is the function's final `return`; Values is nil for a bare return,
// otherwise one expression per result (all evaluated before any is stored).
type Return struct {
	Pos    token.Position
	Values []Expr
}

func (*Assign) stmt() {}
func (*For) stmt()    {}
func (*If) stmt()     {}
func (*Return) stmt() {}

// Expr is a typed expression.
type Expr interface {
	Type() ir.Type
	Pos() token.Position
}

// VarRef reads a variable.
type VarRef struct {
	At  token.Position
	Var *Var
}

// FloatLit is a float constant in a float32 context (a rank-0 float32). An
// integer literal or named constant used in a tensor expression becomes one.
type FloatLit struct {
	At    token.Position
	Value float64
}

// IntLit is an integer constant (a literal or a named const) in an integer
// context.
type IntLit struct {
	At    token.Position
	Value int64
	Name  string // the const's name, "" for a literal
}

// UnaryOp is one of the unary operators.
type UnaryOp uint8

// The unary operators.
const (
	Neg UnaryOp = iota + 1 // -x, float tensor or int scalar
	Not                    // !b
)

// Unary is a unary expression.
type Unary struct {
	At  token.Position
	Op  UnaryOp
	X   Expr
	Typ ir.Type
}

// BinaryOp is one of the binary operators.
type BinaryOp uint8

// The binary operators. Add, Sub, Mul and Div work on float32 tensors (with
// broadcasting) or on int64 scalars (wrapping; Div is not allowed on
// integers: use CheckedDiv). Comparisons take int64 scalars; AndAnd and
// OrOr take bools and short-circuit.
const (
	Add BinaryOp = iota + 1
	Sub
	Mul
	Div
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	AndAnd
	OrOr
)

// Binary is a binary expression.
type Binary struct {
	At  token.Position
	Op  BinaryOp
	X   Expr
	Y   Expr
	Typ ir.Type
}

// Builtin names a builtin function.
type Builtin uint8

// The builtins of the language.
const (
	MatMul Builtin = iota + 1
	Transpose
	Tanh
	Exp
	Log
	Sigmoid
	Relu
	Abs
	Sqrt
	Maximum
	Minimum
	Softmax
	LogSoftmax
	Sum
	Mean
	Max
	Argmax
	CheckedRem
	CheckedDiv
)

// Call is a builtin call. For the axis builtins Axis is normalised
// (0 <= Axis < rank of Args[0]) and the axis argument is not in Args.
type Call struct {
	At       token.Position
	Builtin  Builtin
	Args     []Expr
	Axis     int
	KeepDims bool
	ArgText  []string // source text of each argument, for runtime error messages
	Typ      ir.Type
}

func (e *VarRef) Type() ir.Type   { return e.Var.Type }
func (e *FloatLit) Type() ir.Type { return ir.Type{DType: ir.Float32} }
func (e *IntLit) Type() ir.Type   { return ir.Type{DType: ir.Int64} }
func (e *Unary) Type() ir.Type    { return e.Typ }
func (e *Binary) Type() ir.Type   { return e.Typ }
func (e *Call) Type() ir.Type     { return e.Typ }

func (e *VarRef) Pos() token.Position   { return e.At }
func (e *FloatLit) Pos() token.Position { return e.At }
func (e *IntLit) Pos() token.Position   { return e.At }
func (e *Unary) Pos() token.Position    { return e.At }
func (e *Binary) Pos() token.Position   { return e.At }
func (e *Call) Pos() token.Position     { return e.At }

var builtinNames = [...]string{
	MatMul: "MatMul", Transpose: "Transpose", Tanh: "Tanh", Exp: "Exp", Log: "Log", Sigmoid: "Sigmoid",
	Relu: "Relu", Abs: "Abs", Sqrt: "Sqrt", Maximum: "Maximum", Minimum: "Minimum", Softmax: "Softmax",
	LogSoftmax: "LogSoftmax", Sum: "Sum", Mean: "Mean", Max: "Max", Argmax: "Argmax",
	CheckedRem: "CheckedRem", CheckedDiv: "CheckedDiv",
}

// String returns the builtin's name as written in a program.
func (b Builtin) String() string {
	if int(b) < len(builtinNames) && builtinNames[b] != "" {
		return builtinNames[b]
	}
	return "invalid"
}

// Site describes a CheckedRem or CheckedDiv call of function fn for its
// runtime error message; the oracle and the lowering both use it, so every
// executor prints the same text.
//
// The message names the dividend by its source text, "(round_idx=0)"; a
// dividend written as a literal is named "dividend", "(dividend=3)", not
// "(3=3)".
func (e *Call) Site(fn string) *ir.Site {
	lhs := e.ArgText[0]
	if isIntLiteral(lhs) {
		lhs = "dividend"
	}
	return &ir.Site{Func: fn, Builtin: e.Builtin.String(), LHS: lhs, Pos: e.At.String()}
}

// isIntLiteral reports whether text is an integer literal, perhaps signed
// or parenthesised: "3", "-3", "(0x10)", "1_000".
func isIntLiteral(text string) bool {
	t := strings.TrimSpace(text)
	for len(t) > 1 && t[0] == '(' && t[len(t)-1] == ')' {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	t = strings.TrimLeft(t, "+-")
	if t == "" || t[0] < '0' || t[0] > '9' {
		return false
	}
	_, err := strconv.ParseUint(t, 0, 64)
	return err == nil
}

// Types returns the distinct types in f: of its parameters and results, of
// every variable and of every expression of its body, in order of first
// appearance. The lowered function's values have exactly these types, so an
// executor over the tree (the oracle) and one over the IR hand the same set
// to ir.CheckSizes. Nil nodes of a hand-built tree are skipped.
func (f *Func) Types() []ir.Type {
	var out []ir.Type
	seen := map[string]bool{}
	add := func(t ir.Type) {
		if key := t.String(); !seen[key] {
			seen[key] = true
			out = append(out, t)
		}
	}
	addVar := func(v *Var) {
		if v != nil {
			add(v.Type)
		}
	}
	var expr func(e Expr)
	expr = func(e Expr) {
		switch e := e.(type) {
		case nil:
			return
		case *VarRef:
			addVar(e.Var)
			return
		case *Unary:
			expr(e.X)
		case *Binary:
			expr(e.X)
			expr(e.Y)
		case *Call:
			for _, a := range e.Args {
				expr(a)
			}
		}
		add(e.Type())
	}
	stmt := func(s Stmt) {
		switch s := s.(type) {
		case *Assign:
			addVar(s.Var)
			expr(s.Value)
		case *For:
			addVar(s.Index)
			expr(s.Count)
		case *If:
			expr(s.Cond)
		case *Return:
			for _, v := range s.Values {
				expr(v)
			}
		}
	}
	for _, v := range f.Params {
		addVar(v)
	}
	for _, v := range f.Results {
		addVar(v)
	}
	WalkStmts(f.Body, stmt)
	return out
}

// WalkStmts calls fn for every statement of body in source order,
// descending into loops and branches (pre-order), as ir.Walk does for the
// lowered form.
func WalkStmts(body []Stmt, fn func(Stmt)) {
	for _, s := range body {
		fn(s)
		switch s := s.(type) {
		case *For:
			WalkStmts(s.Body, fn)
		case *If:
			WalkStmts(s.Then, fn)
			WalkStmts(s.Else, fn)
		}
	}
}

// ScenarioName returns the file's //rx:scenario, or its base name without
// .rx when it has none: the name its cases and reports carry.
func (f *File) ScenarioName() string {
	if f.Scenario != "" {
		return f.Scenario
	}
	return strings.TrimSuffix(path.Base(f.Name), ".rx")
}

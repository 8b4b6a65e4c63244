package ir

// Program is one lowered .rx file.
type Program struct {
	File  string // the file name as given to the parser
	Funcs []*Func
}

// Func returns the function named name, or nil.
func (p *Program) Func(name string) *Func {
	for _, f := range p.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Func is one lowered scoring function.
type Func struct {
	Name    string
	Pos     string   // "file:line:col" of the func keyword
	Params  []*Value // in declaration order
	Results []*Value // in declaration order
	Values  []*Value // every value, Values[i].ID == i
	Body    []Instr
}

// ValueKind says how a value is defined.
type ValueKind uint8

// The kinds of values.
const (
	Param     ValueKind = iota + 1 // an input, never written
	Result                         // a named result, written by the body
	Var                            // a local variable of the source
	Temp                           // an intermediate, written exactly once
	LoopIndex                      // a for loop's index, written by the For
)

// String names the kind.
func (k ValueKind) String() string {
	return [...]string{"invalid", "param", "result", "var", "temp", "index"}[k]
}

// Value is a typed storage location.
type Value struct {
	ID   int
	Name string // source name; "" for temps
	Kind ValueKind
	Type Type
}

// Instr is an instruction: *Op, *For or *If.
type Instr interface{ instr() }

// OpKind names an operation.
type OpKind uint8

// The operations. Float ops work on float32 tensors with NumPy broadcasting
// (a rank-0 operand broadcasts everywhere); integer ops on int64 scalars.
const (
	InvalidOp OpKind = iota

	ConstF // Dst (rank-0 float32) = float32(F)
	ConstI // Dst (int64 scalar) = I
	Copy   // Dst = Args[0], same type

	Add // float, broadcasting
	Sub
	Mul
	Div
	Neg
	Maximum
	Minimum

	Tanh // unary float, elementwise
	Exp
	Log
	Sigmoid
	Relu
	Abs
	Sqrt

	MatMul    // rank 2 × rank 2
	Transpose // rank 2
	Softmax   // along Axis
	LogSoftmax
	Sum // along Axis, KeepDims
	Mean
	Max
	Argmax // along Axis, KeepDims, result int64

	IAdd // int64 scalar, wrapping
	ISub
	IMul
	INeg
	CheckedDiv // int64 scalar, Site set; errors on zero and MinInt64 / -1
	CheckedRem // int64 scalar, Site set; errors on zero; MinInt64 % -1 is 0

	Eq // int64 scalars -> bool
	Ne
	Lt
	Le
	Gt
	Ge
	Not // bool
	numOps
)

var opNames = [...]string{
	InvalidOp: "invalid", ConstF: "constf", ConstI: "consti", Copy: "copy",
	Add: "add", Sub: "sub", Mul: "mul", Div: "div", Neg: "neg", Maximum: "maximum", Minimum: "minimum",
	Tanh: "tanh", Exp: "exp", Log: "log", Sigmoid: "sigmoid", Relu: "relu", Abs: "abs", Sqrt: "sqrt",
	MatMul: "matmul", Transpose: "transpose", Softmax: "softmax", LogSoftmax: "logsoftmax",
	Sum: "sum", Mean: "mean", Max: "max", Argmax: "argmax",
	IAdd: "iadd", ISub: "isub", IMul: "imul", INeg: "ineg", CheckedDiv: "checkeddiv", CheckedRem: "checkedrem",
	Eq: "eq", Ne: "ne", Lt: "lt", Le: "le", Gt: "gt", Ge: "ge", Not: "not",
}

// String returns the printer's name of the op.
func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return "invalid"
}

// Op is one operation writing Dst.
type Op struct {
	Kind     OpKind
	Dst      *Value
	Args     []*Value
	Axis     int     // Softmax, LogSoftmax, Sum, Mean, Max, Argmax: normalised, 0 <= Axis < rank
	KeepDims bool    // Sum, Mean, Max, Argmax
	F        float64 // ConstF
	I        int64   // ConstI
	Site     *Site   // CheckedDiv, CheckedRem: where, for error messages
}

// Site describes the source of a checked operation, so that every executor
// builds the same error text.
type Site struct {
	Func    string // the scoring function
	Builtin string // "CheckedRem" or "CheckedDiv"
	LHS     string // source text of the dividend
	Pos     string // "file:line:col"
}

// For runs Body Count times with Index = 0, 1, …; Count <= 0 runs nothing.
// Count is read once, before the first iteration.
type For struct {
	Index *Value // nil for `for range N`
	Count *Value // an int64 scalar
	Pos   string
	Body  []Instr
}

// If runs Then when Cond (a bool) is true, Else otherwise.
type If struct {
	Cond *Value
	Pos  string
	Then []Instr
	Else []Instr
}

func (*Op) instr()  {}
func (*For) instr() {}
func (*If) instr()  {}

// Walk calls fn for every instruction of body in source order, descending
// into loops and branches (pre-order).
func Walk(body []Instr, fn func(Instr)) {
	for _, in := range body {
		fn(in)
		switch in := in.(type) {
		case *For:
			Walk(in.Body, fn)
		case *If:
			Walk(in.Then, fn)
			Walk(in.Else, fn)
		}
	}
}

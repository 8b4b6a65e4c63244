package ir

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/rextio/rxeq/tensor"
)

// Runtime error kinds. Every executor returns a *RuntimeError wrapping one
// of these, with the same text for the same case; errors.Is tells the kind.
var (
	ErrDivisionByZero = errors.New("division by zero")
	ErrOverflow       = errors.New("integer overflow")
	ErrMissingInput   = errors.New("missing input")
	ErrUnknownInput   = errors.New("unknown input")
	ErrDType          = errors.New("wrong dtype")
	ErrRank           = errors.New("wrong rank")
	ErrShape          = errors.New("wrong shape")
	ErrDevice         = errors.New("unsupported device")
	ErrUnsupported    = errors.New("unsupported")
)

// ErrorKinds returns every runtime error kind above, in a fixed order:
// what a comparison or a protocol client recognises when an error is not
// an *RuntimeError itself, or arrives as a kind's name.
func ErrorKinds() []error {
	return []error{ErrDivisionByZero, ErrOverflow, ErrMissingInput, ErrUnknownInput,
		ErrDType, ErrRank, ErrShape, ErrDevice, ErrUnsupported}
}

// RuntimeError is an error raised while a function runs or while its
// inputs are bound. Its text is "FUNC: DETAIL"; Kind is one of the Err*
// sentinels above and is what errors.Is matches.
type RuntimeError struct {
	Kind   error
	Func   string
	Detail string
}

func (e *RuntimeError) Error() string { return e.Func + ": " + e.Detail }

// Unwrap returns the kind.
func (e *RuntimeError) Unwrap() error { return e.Kind }

// CheckedError returns the error of a checked division or remainder at
// site whose divisor is zero, or whose operands overflow (MinInt64 / -1).
// lhs and rhs are the operand values.
func CheckedError(site *Site, lhs, rhs int64) *RuntimeError {
	if rhs == 0 {
		return &RuntimeError{Kind: ErrDivisionByZero, Func: site.Func,
			Detail: fmt.Sprintf("%s: division by zero (%s=%d) at %s", site.Builtin, site.LHS, lhs, site.Pos)}
	}
	return &RuntimeError{Kind: ErrOverflow, Func: site.Func,
		Detail: fmt.Sprintf("%s: integer overflow (%s=%d, divisor -1) at %s", site.Builtin, site.LHS, lhs, site.Pos)}
}

// CheckedDivide computes a / b with Go's truncating semantics, returning
// ok=false when b is zero or a is MinInt64 and b is -1.
func CheckedDivide(a, b int64) (q int64, ok bool) {
	if b == 0 || (a == math.MinInt64 && b == -1) {
		return 0, false
	}
	return a / b, true
}

// CheckedRemainder computes a % b with Go's semantics (the sign of a),
// returning ok=false when b is zero. MinInt64 % -1 is 0, as in Go.
func CheckedRemainder(a, b int64) (r int64, ok bool) {
	if b == 0 {
		return 0, false
	}
	if b == -1 {
		return 0, true
	}
	return a % b, true
}

// Boundary failure codes, shared with the native runtime, which reports a
// failed input check as (code, param index, dim index, got) and lets Go
// format the message with BoundaryError.
const (
	BoundaryOK = iota
	BoundaryDType
	BoundaryRank
	BoundaryDim    // a constant dimension differs
	BoundarySymDim // a symbolic dimension differs from its earlier binding
	BoundaryDevice
	BoundaryNull
)

// ParamSpec describes one parameter for binding: its name and declared type.
type ParamSpec struct {
	Name string
	Type Type
}

// BoundaryError builds the error for a failed input check of params[param]:
// code is one of the Boundary* codes, dim the dimension index, got the
// offending dtype (as a tensor.DType), rank or size, and env the symbol
// bindings made so far (for BoundarySymDim).
func BoundaryError(fn string, params []ParamSpec, param, code, dim int, got int64, env map[string]int64, owner map[string]string) *RuntimeError {
	p := params[param]
	e := &RuntimeError{Func: fn}
	switch code {
	case BoundaryDType:
		e.Kind = ErrDType
		e.Detail = fmt.Sprintf("input %s: dtype %s, want %s (%s)", p.Name, tensor.DType(got), p.Type.DType, p.Type)
	case BoundaryRank:
		e.Kind = ErrRank
		e.Detail = fmt.Sprintf("input %s: rank %d, want %d (%s)", p.Name, got, p.Type.Rank(), p.Type)
	case BoundaryDim:
		e.Kind = ErrShape
		e.Detail = fmt.Sprintf("input %s: dimension %d is %d, want %d (%s)", p.Name, dim, got, p.Type.Shape[dim].Size, p.Type)
	case BoundarySymDim:
		sym := p.Type.Shape[dim].Sym
		e.Kind = ErrShape
		e.Detail = fmt.Sprintf("input %s: dimension %d (%s) is %d, but %s is %d from input %s", p.Name, dim, sym, got, sym, env[sym], owner[sym])
	case BoundaryDevice:
		e.Kind = ErrDevice
		e.Detail = fmt.Sprintf("input %s: device is not cpu:0", p.Name)
	default:
		e.Kind = ErrShape
		e.Detail = fmt.Sprintf("input %s: data is missing (null) for a non-empty tensor", p.Name)
	}
	return e
}

// BindInputs validates inputs against params, in parameter order, and
// returns the symbolic dimension bindings. The checks and their order are
// the contract every executor follows (the native runtime does the same in
// C): missing input, unknown input, dtype (float32 parameters take float32
// tensors, int64 ones int64), rank, then each dimension left to right; a
// symbol is bound by its first occurrence and must agree afterwards.
func BindInputs(fn string, params []ParamSpec, inputs map[string]*tensor.Tensor) (map[string]int64, error) {
	for _, p := range params {
		if inputs[p.Name] == nil {
			return nil, &RuntimeError{Kind: ErrMissingInput, Func: fn, Detail: fmt.Sprintf("missing input %s (%s)", p.Name, p.Type)}
		}
	}
	if len(inputs) != len(params) {
		known := map[string]bool{}
		for _, p := range params {
			known[p.Name] = true
		}
		for _, name := range sortedKeys(inputs) {
			if !known[name] {
				return nil, &RuntimeError{Kind: ErrUnknownInput, Func: fn, Detail: fmt.Sprintf("unknown input %s: the function has no such parameter", name)}
			}
		}
	}
	env := map[string]int64{}
	owner := map[string]string{}
	for i, p := range params {
		t := inputs[p.Name]
		if err := t.Validate(); err != nil {
			return nil, &RuntimeError{Kind: ErrShape, Func: fn, Detail: fmt.Sprintf("input %s: %v", p.Name, err)}
		}
		if !dtypeMatches(p.Type.DType, t.DType) {
			return nil, BoundaryError(fn, params, i, BoundaryDType, 0, int64(t.DType), env, owner)
		}
		if t.Rank() != p.Type.Rank() {
			return nil, BoundaryError(fn, params, i, BoundaryRank, 0, int64(t.Rank()), env, owner)
		}
		for d, dim := range p.Type.Shape {
			got := int64(t.Shape[d])
			if !dim.IsSym() {
				if got != dim.Size {
					return nil, BoundaryError(fn, params, i, BoundaryDim, d, got, env, owner)
				}
				continue
			}
			if v, ok := env[dim.Sym]; ok {
				if v != got {
					return nil, BoundaryError(fn, params, i, BoundarySymDim, d, got, env, owner)
				}
				continue
			}
			env[dim.Sym] = got
			owner[dim.Sym] = p.Name
		}
	}
	return env, nil
}

func dtypeMatches(want DType, got tensor.DType) bool {
	switch want {
	case Float32:
		return got == tensor.Float32
	case Int64:
		return got == tensor.Int64
	}
	return false
}

func sortedKeys(m map[string]*tensor.Tensor) []string {
	return slices.Sorted(maps.Keys(m))
}

// ParamList returns the binding description of f's parameters.
func (f *Func) ParamList() []ParamSpec {
	out := make([]ParamSpec, len(f.Params))
	for i, p := range f.Params {
		out[i] = ParamSpec{Name: p.Name, Type: p.Type}
	}
	return out
}

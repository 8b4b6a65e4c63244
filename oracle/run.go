package oracle

import (
	"context"
	"errors"
	"fmt"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// ErrInternal is the kind of an error that a checked program should never
// produce: an inconsistency between the tree and what the checker promises
// (an unknown builtin, operands of the wrong kind or shape, a result never
// assigned), or a recovered panic. errors.Is(err, ErrInternal) tells it from
// the runtime errors of package ir.
var ErrInternal = errors.New("oracle internal error")

// Run evaluates fn on inputs in float64 and returns its results by name.
//
// Inputs are validated and bound with ir.BindInputs, so a missing, unknown,
// mistyped or misshapen input fails with the same *ir.RuntimeError as in
// every other executor. A runtime error of the program (checked division or
// remainder) is an *ir.RuntimeError too. Cancellation returns an error
// wrapping ctx.Err(); inconsistencies the checker should have prevented
// return an error of kind ErrInternal. Run never panics.
func Run(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor) (out map[string]*tensor.Tensor, err error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: nil function", ErrInternal)
	}
	defer func() {
		if r := recover(); r != nil {
			out = nil
			err = fmt.Errorf("%s: %w: panic: %v", fn.Name, ErrInternal, r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name, err)
	}
	env, err := ir.BindInputs(fn.Name, fn.ParamList(), inputs)
	if err != nil {
		return nil, err
	}
	e := &evaluator{ctx: ctx, fn: fn, env: env, vars: map[int]*value{}}
	for _, p := range fn.Params {
		v, err := fromTensor(inputs[p.Name])
		if err != nil {
			return nil, e.internal("parameter %s: %v", p.Name, err)
		}
		e.vars[p.ID] = v
	}
	if _, err := e.block(fn.Body); err != nil {
		return nil, err
	}
	return e.results()
}

// evaluator holds the state of one Run: the variables by Var.ID.
type evaluator struct {
	ctx  context.Context
	fn   *program.Func
	env  map[string]int64 // symbolic dimensions bound from the inputs
	vars map[int]*value
}

// internal returns an ErrInternal error naming the function.
func (e *evaluator) internal(format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", e.fn.Name, ErrInternal, fmt.Sprintf(format, args...))
}

// results copies every declared result into a tensor, checking its shape
// against the declared type with the symbols bound at the boundary.
func (e *evaluator) results() (map[string]*tensor.Tensor, error) {
	out := make(map[string]*tensor.Tensor, len(e.fn.Results))
	for _, r := range e.fn.Results {
		v, ok := e.vars[r.ID]
		if !ok {
			return nil, e.internal("result %s was never assigned", r.Name)
		}
		if err := checkShape(r.Type, v, e.env); err != nil {
			return nil, e.internal("result %s: %v", r.Name, err)
		}
		t, err := v.toTensor()
		if err != nil {
			return nil, e.internal("result %s: %v", r.Name, err)
		}
		out[r.Name] = t
	}
	return out, nil
}

// checkShape reports whether v has the dtype and rank of t and every
// dimension that is constant or bound in env. A symbol bound only inside
// the body is not checked.
func checkShape(t ir.Type, v *value, env map[string]int64) error {
	if v.kind != kindOf(t.DType) {
		return fmt.Errorf("have a %s value, want %s", v.kind, t)
	}
	if t.DType == ir.Bool {
		return nil
	}
	if len(v.shape) != t.Rank() {
		return fmt.Errorf("have shape %v, want %s", v.shape, t)
	}
	for i, want := range ir.Concrete(t.Shape, env) {
		if want >= 0 && v.shape[i] != want {
			return fmt.Errorf("have shape %v, want %s", v.shape, t)
		}
	}
	return nil
}

// kindOf returns the value kind that holds a language dtype.
func kindOf(d ir.DType) kind {
	switch d {
	case ir.Float32:
		return floatKind
	case ir.Int64:
		return intKind
	case ir.Bool:
		return boolKind
	}
	return 0
}

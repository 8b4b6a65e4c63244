package oracle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

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
// remainder) is an *ir.RuntimeError too, and so is a shape that would
// hold more than tensor.MaxElements elements with the bound dimensions
// (ir.CheckSizes, before anything is allocated). Cancellation returns an error
// wrapping ctx.Err(); inconsistencies the checker should have prevented
// return an error of kind ErrInternal. Run never panics.
//
// Run is RunWith with the zero Options.
func Run(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	return RunWith(ctx, fn, inputs, Options{})
}

// Options configure RunWith. The zero Options is Run's exact float64
// evaluation.
type Options struct {
	// Noise, when non-nil, makes the run one sample of float32 execution
	// under stochastic rounding (Monte Carlo arithmetic, "random rounding"):
	// every float value a float32 executor would round is computed in
	// float64 and then replaced by one of the two float32 values around it,
	// the upper one with probability (x-lo)/(hi-lo), so the rounding is
	// unbiased. This covers float literals, the result of every + - * / and
	// of Exp, Log, Tanh, Sigmoid and Sqrt, and every intermediate of the
	// composite builtins: each product and partial sum of MatMul, each
	// partial sum of Sum and Mean and Mean's division, and in Softmax and
	// LogSoftmax the subtraction of the lane maximum, each exp, each partial
	// sum, the division (Softmax), the log and the final subtraction
	// (LogSoftmax). Operations that are exact on float32 values (negation,
	// Abs, Relu, Maximum, Minimum, Max, Argmax, Transpose) round nothing.
	// Values beyond the float32 range overflow to ±Inf and values far below
	// the smallest subnormal become ±0, as in float32.
	//
	// The spread of several such runs around the exact (Noise == nil) result
	// measures how sensitive each output is to float32 rounding. A noise
	// run is a sensitivity probe, not a float32 executor: it does not
	// reproduce the rounding, summation order, fused multiply-adds or
	// library functions of any executor. Results are still returned as
	// float64 tensors (holding float32 values).
	//
	// The run draws from Noise in evaluation order, so the same generator
	// state and inputs give the same results. A *rand.Rand is not safe for
	// concurrent use: give each concurrent run its own.
	Noise *rand.Rand
	// Nearest, when Noise is nil, rounds at the same points to the nearest
	// float32 (ties to even), as a float32 executor does: one
	// deterministic sample beside the random ones, which catches a
	// divergence that random rounding reaches only now and then (a
	// Minimum that picks the other side when a sum lands just below 1
	// instead of just above). Like a noise run it is a probe, not an
	// executor.
	Nearest bool
}

// RunWith is Run with options; see Options.
func RunWith(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor, opts Options) (out map[string]*tensor.Tensor, err error) {
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
	// Checked once here, no shape of the function overflows afterwards.
	if err := ir.CheckSizes(fn.Name, fn.Types(), env); err != nil {
		return nil, err
	}
	e := &evaluator{ctx: ctx, fn: fn, env: env, vars: map[int]*value{}}
	if opts.Noise != nil || opts.Nearest {
		e.noise = &noise{r: opts.Noise}
	}
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
	// noise is nil for the exact evaluation, else the stochastic rounding
	// applied after every float32 rounding point (see Options.Noise).
	noise *noise
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

package native

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Call is one function of a Program prepared for positional calls
// (Program.Prepare): its inputs and outputs are slices in parameter and
// result order, so that a call looks no name up. A loop that scores one
// small batch after another spends a good part of each call on the names
// of RunInto's maps (measured: about a sixth of score_pipeline's RunInto
// at one row, with eleven map lookups); Call.RunInto spends none. A Call
// is safe for concurrent use, as its Program is, and fails with
// ErrClosed once the Program is closed.
type Call struct {
	p       *Program
	c       *compiled
	params  []ir.ParamSpec
	results []string
}

// Prepare returns function fn prepared for positional calls.
func (p *Program) Prepare(fn string) (*Call, error) {
	c := p.funcs[fn]
	f := p.ir.Func(fn)
	if c == nil || f == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFunc, fn)
	}
	k := &Call{p: p, c: c, params: f.ParamList()}
	for _, r := range f.Results {
		k.results = append(k.results, r.Name)
	}
	return k, nil
}

// Params returns the names of the call's inputs, in the order RunInto
// takes them (the parameters' order, as ir.Func.ParamList gives it).
func (k *Call) Params() []string {
	out := make([]string, len(k.params))
	for i, ps := range k.params {
		out[i] = ps.Name
	}
	return out
}

// Results returns the names of the call's outputs, in the order RunInto
// takes them (the results' order).
func (k *Call) Results() []string { return append([]string(nil), k.results...) }

// RunInto is Program.RunInto with inputs and outputs by position: inputs
// in Params order, outputs in Results order, each output of its result's
// dtype and of the shape the inputs give it. Its errors are RunInto's,
// with the same texts (a nil input is a missing one); a slice of the
// wrong length is an *ir.RuntimeError of kind ir.ErrMissingInput
// (inputs) or ir.ErrShape (outputs). On the native path it allocates
// nothing and looks up no name; on the fallback path (Auto) it runs as
// RunInto does.
func (k *Call) RunInto(ctx context.Context, inputs, outputs []*tensor.Tensor) (Path, error) {
	p, c := k.p, k.c
	fn := c.name
	if len(inputs) != len(k.params) {
		return "", &ir.RuntimeError{Kind: ir.ErrMissingInput, Func: fn,
			Detail: fmt.Sprintf("Call.RunInto: %d inputs for %d parameters", len(inputs), len(k.params))}
	}
	if len(outputs) != len(k.results) {
		return "", &ir.RuntimeError{Kind: ir.ErrShape, Func: fn,
			Detail: fmt.Sprintf("Call.RunInto: %d outputs for %d results", len(outputs), len(k.results))}
	}
	if c.entry == nil {
		return p.RunInto(ctx, fn, k.inputMap(inputs), k.outputMap(outputs))
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return "", ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return "", &ir.RuntimeError{Kind: err, Func: fn, Detail: err.Error()}
	}
	m := c.meta
	fr := p.frames.get(len(m.Params) + len(m.Results))
	if fr == nil {
		return "", fmt.Errorf("%w: %s: out of memory allocating a call frame", ErrInternal, fn)
	}
	fr.env.bound = 0
	for i, t := range inputs {
		if t == nil {
			p.frames.put(fr, nil)
			return "", checkInputNames(fn, m.Params, k.inputMap(inputs))
		}
		fr.bindParam(i, t, m.ParamDims[i])
	}
	for j, t := range outputs {
		if err := fr.bindOut(m, j, t); err != nil {
			p.frames.put(fr, nil)
			return "", err
		}
	}
	st := p.invoke(fr, c, p.def)
	if err := p.def.inForce(fn, st); err != nil {
		return "", err
	}
	if st.code != rxOK {
		return "", callError(m, k.inputMap(inputs), st)
	}
	return p.path, nil
}

// inputMap is the inputs by name (nil ones left out), for the fallback
// and for the texts of errors.
func (k *Call) inputMap(inputs []*tensor.Tensor) map[string]*tensor.Tensor {
	in := make(map[string]*tensor.Tensor, len(inputs))
	for i, t := range inputs {
		if t != nil {
			in[k.params[i].Name] = t
		}
	}
	return in
}

// outputMap is the outputs by name (nil ones left out), for the fallback.
func (k *Call) outputMap(outputs []*tensor.Tensor) map[string]*tensor.Tensor {
	out := make(map[string]*tensor.Tensor, len(outputs))
	for j, t := range outputs {
		if t != nil {
			out[k.results[j]] = t
		}
	}
	return out
}

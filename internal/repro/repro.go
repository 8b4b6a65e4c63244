// Package repro is what the standalone reproducers of the generated-code
// exports (pyexport's repro.py, jsexport's repro.js) share on the Go
// side: their options, the checks and defaults applied to them, the first
// line of their header, and the exact little-endian bytes of the inputs
// they embed. The script each one runs is its own language's.
package repro

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Options describe a reproducer: which executor and function, and the
// inputs of the failing case.
type Options struct {
	// Executor is the executor whose discrepancy is reproduced (one of
	// the export's executors).
	Executor executor.Name
	// Func is the function of the case.
	Func string
	// Inputs are the case's inputs by parameter name (float32 tensors,
	// int64 tensors and rank-0 int64 scalars), written bit for bit.
	Inputs map[string]*tensor.Tensor
	// RTol and ATol are the tolerance of float outputs: |got - want| <=
	// ATol + RTol*|want| (0: rxeq's defaults, 1e-4 and 3e-6).
	RTol, ATol float64
	// Source and Version go into the header.
	Source, Version string
}

// Prepare finds the function of opts in p and fills in the defaults: the
// tolerance when both are 0, and Source (p's file) when it is empty. A
// function p lacks is an error wrapping errBase.
func Prepare(p *ir.Program, opts Options, errBase error) (*ir.Func, Options, error) {
	f := p.Func(opts.Func)
	if f == nil {
		return nil, opts, fmt.Errorf("%w: %s has no function %q", errBase, p.File, opts.Func)
	}
	if opts.RTol == 0 && opts.ATol == 0 {
		opts.RTol, opts.ATol = 1e-4, 3e-6
	}
	if opts.Source == "" {
		opts.Source = p.File
	}
	return f, opts, nil
}

// Inputs are the inputs of f's parameters, in order; a missing one is an
// error wrapping errBase.
func Inputs(f *ir.Func, opts Options, errBase error) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, len(f.Params))
	for i, prm := range f.Params {
		t := opts.Inputs[prm.Name]
		if t == nil {
			return nil, fmt.Errorf("%w: repro of %s: no input %s", errBase, opts.Func, prm.Name)
		}
		out[i] = t
	}
	return out, nil
}

// Byline is the header's first line, without the comment marker and
// what follows the executor: "Reproducer written by rxeq V: F from S, run
// by E". text renders program text for a comment of the language.
func Byline(opts Options, text func(string) string) string {
	return fmt.Sprintf("Reproducer written by rxeq %s: %s from %s, run by %s", text(opts.Version), text(opts.Func), text(opts.Source), opts.Executor)
}

// StripHeader drops a module's leading comment lines (those starting
// with marker) and the blank lines after them.
func StripHeader(s, marker string) string {
	for strings.HasPrefix(s, marker) {
		_, s, _ = strings.Cut(s, "\n")
	}
	return strings.TrimLeft(s, "\n")
}

// LittleEndian is t's elements as little-endian bytes: 8 a value for
// int64, 4 (the float32 bits) otherwise.
func LittleEndian(t *tensor.Tensor) []byte {
	var raw []byte
	if t.DType == tensor.Int64 {
		for _, v := range t.I64 {
			u := uint64(v)
			for k := 0; k < 8; k++ {
				raw = append(raw, byte(u>>(8*k)))
			}
		}
		return raw
	}
	for _, v := range t.F32 {
		u := math.Float32bits(v)
		for k := 0; k < 4; k++ {
			raw = append(raw, byte(u>>(8*k)))
		}
	}
	return raw
}

// Dims is t's shape as decimal strings.
func Dims(t *tensor.Tensor) []string {
	out := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		out[i] = strconv.Itoa(d)
	}
	return out
}

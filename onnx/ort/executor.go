package ort

import (
	"context"
	"fmt"
	"sync"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Executor runs every function of a program as the ONNX model onnx.Export
// writes for it, in ONNX Runtime: the executors "onnxruntime" (Level
// Optimize, ONNX Runtime's default) and "onnxruntime-noopt" (NoOptimize).
//
// Prepare exports each function and creates one session per function,
// kept until Close; a function that cannot be exported, or whose model
// ONNX Runtime rejects, fails its own runs with that error and leaves the
// others alone. Run validates the inputs with ir.BindInputs (the shared
// boundary errors), passes them to ONNX Runtime in place, lets it write
// the results into tensors allocated from the checked result shapes, and
// turns a non-zero rx_error output into the program's runtime error
// (onnx.Signature.Err). A failure of ONNX Runtime itself is the case's
// error: an error wrapping *Error, with ONNX Runtime's message.
type Executor struct {
	// Library is the path of libonnxruntime.so.1 ("": DefaultLibrary).
	Library string
	// Level is the graph optimization level.
	Level Level
}

// Name returns executor.ONNXRuntime, or executor.ONNXRuntimeNoOpt for
// Level NoOptimize.
func (e Executor) Name() executor.Name {
	if e.Level == NoOptimize {
		return executor.ONNXRuntimeNoOpt
	}
	return executor.ONNXRuntime
}

// MemoryProfile: float32, reading the runner's inputs in place.
func (Executor) MemoryProfile() executor.MemoryProfile {
	return executor.MemoryProfile{FloatBytes: 4, InPlace: true}
}

// Available reports why e cannot run here (Find's error), or nil.
func (e Executor) Available() error {
	_, err := Find(e.Library)
	return err
}

// Prepare loads the library (once per process) and creates the sessions.
func (e Executor) Prepare(ctx context.Context, file *program.File, p *ir.Program) (executor.Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: %s: nil program", executor.ErrExecutor, e.Name())
	}
	lib, err := Find(e.Library)
	if err != nil {
		return nil, err
	}
	var meta onnx.Meta
	if file != nil {
		meta.Source = file.Name
	}
	pr := &prepared{name: e.Name(), lib: lib, level: e.Level, funcs: make(map[string]*function, len(p.Funcs))}
	for _, f := range p.Funcs {
		if err := ctx.Err(); err != nil {
			_ = pr.Close()
			return nil, err
		}
		pr.funcs[f.Name] = e.prepareFunc(lib, p, f, meta)
	}
	return pr, nil
}

func (e Executor) prepareFunc(lib *Library, p *ir.Program, f *ir.Func, meta onnx.Meta) *function {
	fn := &function{params: f.ParamList(), results: f.Results}
	sig, err := onnx.Describe(p, f.Name)
	if err != nil {
		fn.err = fmt.Errorf("%s: %s: %w", e.Name(), f.Name, err)
		return fn
	}
	fn.sig = sig
	model, err := onnx.Export(p, f.Name, meta)
	if err != nil {
		fn.err = fmt.Errorf("%s: exporting %s to ONNX: %w", e.Name(), f.Name, err)
		return fn
	}
	var ins, outs []string
	for _, port := range sig.Inputs {
		ins = append(ins, port.Name)
	}
	for _, port := range sig.Outputs {
		outs = append(outs, port.Name)
	}
	if sig.Error != "" {
		outs = append(outs, sig.Error)
	}
	s, err := lib.NewSession(model, ins, outs, SessionOptions{Level: e.Level})
	if err != nil {
		fn.err = fmt.Errorf("%s: %s: %w", e.Name(), f.Name, err)
		return fn
	}
	fn.session = s
	return fn
}

// function is one function's session, or why it has none.
type function struct {
	sig     *onnx.Signature
	params  []ir.ParamSpec
	results []*ir.Value
	session *Session
	err     error
}

type prepared struct {
	name  executor.Name
	lib   *Library
	level Level
	mu    sync.Mutex
	funcs map[string]*function
}

var _ executor.Built = (*prepared)(nil)

// Source returns nil: the models are not C, and there is no source lock
// to check against them (rxeq export --format onnx writes them).
func (*prepared) Source() []byte { return nil }

// Info names the framework: ONNX Runtime's version and the optimization
// level, for the reports' "framework" field and JUnit property.
func (p *prepared) Info() executor.BuildInfo {
	return executor.BuildInfo{Library: p.lib.Path(), Framework: fmt.Sprintf("ONNX Runtime %s, graph optimization %s", p.lib.Version(), p.level)}
}

func (p *prepared) Run(ctx context.Context, name string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	out := executor.Outcome{Path: p.name}
	p.mu.Lock()
	fn := p.funcs[name]
	p.mu.Unlock()
	if fn == nil {
		return out, fmt.Errorf("%w: %s: no function %q", executor.ErrExecutor, p.name, name)
	}
	if fn.err != nil {
		return out, fn.err
	}
	env, err := ir.BindInputs(name, fn.params, inputs)
	if err != nil {
		return out, err
	}
	ins := make([]*tensor.Tensor, len(fn.sig.Inputs))
	for i, port := range fn.sig.Inputs {
		ins[i] = inputs[port.Value.Name]
	}
	n := len(fn.sig.Outputs)
	outs := make([]*tensor.Tensor, n, n+1)
	for i, port := range fn.sig.Outputs {
		shape := ir.Concrete(port.Value.Type.Shape, env)
		if port.Value.Type.DType == ir.Int64 {
			outs[i] = tensor.NewInt64(shape...)
		} else {
			outs[i] = tensor.NewFloat32(shape...)
		}
	}
	if fn.sig.Error != "" {
		outs = append(outs, tensor.NewInt64(3))
	}
	if err := fn.session.Run(ctx, ins, outs); err != nil {
		return out, fmt.Errorf("%s: %s: %w", p.name, name, err)
	}
	if fn.sig.Error != "" {
		if err := fn.sig.Err(outs[n].I64); err != nil {
			return out, err
		}
	}
	out.Outputs = make(map[string]*tensor.Tensor, n)
	for i, port := range fn.sig.Outputs {
		out.Outputs[port.Value.Name] = outs[i]
	}
	return out, nil
}

// Close releases every session; Run fails afterwards.
func (p *prepared) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, fn := range p.funcs {
		if fn.session != nil {
			_ = fn.session.Close()
		}
	}
	p.funcs = map[string]*function{}
	return nil
}

package ort

import (
	"context"
	"fmt"
	"slices"
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
	// Lazy creates each function's session at the function's first Run
	// instead of at Prepare. The isolate worker runs ONNX Runtime so: a
	// crash or a hang of ONNX Runtime while it creates (and optimizes) a
	// session then happens during a call, which fails that one case,
	// instead of during the preparation of the whole program. A
	// function's model is still exported at Prepare; the error of a
	// session ONNX Runtime rejects is that function's, as without Lazy.
	Lazy bool
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
	pr := &Prepared{name: e.Name(), lib: lib, level: e.Level, funcs: make(map[string]*function, len(p.Funcs))}
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
	for _, port := range sig.Inputs {
		fn.ins = append(fn.ins, port.Name)
	}
	for _, port := range sig.Outputs {
		fn.outs = append(fn.outs, port.Name)
	}
	if sig.Error != "" {
		fn.outs = append(fn.outs, sig.Error)
	}
	fn.model, fn.lib, fn.level, fn.exec, fn.name = model, lib, e.Level, e.Name(), f.Name
	if !e.Lazy {
		fn.create()
	}
	return fn
}

// function is one function's session, or why it has none.
type function struct {
	sig     *onnx.Signature
	params  []ir.ParamSpec
	results []*ir.Value

	// What creating the session takes (kept until it is created).
	lib       *Library
	model     []byte
	ins, outs []string
	level     Level
	exec      executor.Name
	name      string

	// free holds the blocks of released Results, at most maxFree, for
	// the next runs to reuse. A list under a lock, not a sync.Pool: a
	// goroutine often comes back from a cgo call on another P, and a
	// sync.Pool would then miss the block it was given on the first one.
	freeMu sync.Mutex
	free   []*outBlock

	mu      sync.Mutex // guards session, err and made after Prepare (Lazy)
	made    bool       // the session was created, or failed to be
	session *Session
	err     error
}

// create creates the session of fn, once: its error is fn's. The caller
// holds fn.mu, or has the only reference.
func (fn *function) create() {
	if fn.made || fn.err != nil {
		return
	}
	fn.made = true
	s, err := fn.lib.NewSession(fn.model, fn.ins, fn.outs, SessionOptions{Level: fn.level})
	fn.model = nil
	if err != nil {
		fn.err = fmt.Errorf("%s: %s: %w", fn.exec, fn.name, err)
		return
	}
	fn.session = s
}

// ready returns fn's session, creating it first under Lazy, or fn's
// error.
func (fn *function) ready() (*Session, error) {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	fn.create()
	return fn.session, fn.err
}

// Prepared is a program Executor.Prepare readied: one ONNX Runtime session
// per function (executor.Prepared). Besides Run, RunResult returns outputs
// whose memory Result.Release gives back for the next run to reuse.
type Prepared struct {
	name  executor.Name
	lib   *Library
	level Level
	mu    sync.Mutex
	funcs map[string]*function
}

var _ executor.Built = (*Prepared)(nil)

// Name is the executor that prepared p: executor.ONNXRuntime or
// executor.ONNXRuntimeNoOpt (every Outcome's Path).
func (p *Prepared) Name() executor.Name { return p.name }

// Source returns nil: the models are not C, and there is no source lock
// to check against them (rxeq export --format onnx writes them).
func (*Prepared) Source() []byte { return nil }

// Info names the framework: ONNX Runtime's version and the optimization
// level, for the reports' "framework" field and JUnit property.
func (p *Prepared) Info() executor.BuildInfo {
	return executor.BuildInfo{Library: p.lib.Path(), Framework: fmt.Sprintf("ONNX Runtime %s, graph optimization %s", p.lib.Version(), p.level)}
}

// Run runs function name on inputs (executor.Prepared); its outputs are
// fresh memory the caller keeps.
func (p *Prepared) Run(ctx context.Context, name string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	res, err := p.run(ctx, name, inputs, false)
	if err != nil {
		return executor.Outcome{Path: p.name}, err
	}
	return executor.Outcome{Outputs: res.Outputs, Path: p.name}, nil
}

// RunResult is Run with outputs whose memory can be given back: after
// Result.Release, the next run of the same function with outputs of the
// same shapes has ONNX Runtime write into that memory again instead of
// into freshly allocated memory (whose first touch, page faults
// included, costs more at large batches than ONNX Runtime's own Run).
// A Result that is not released is garbage collected as usual.
func (p *Prepared) RunResult(ctx context.Context, name string, inputs map[string]*tensor.Tensor) (*Result, error) {
	return p.run(ctx, name, inputs, true)
}

// run runs function name; with reuse its outputs are a released block
// that fits, when there is one. Run passes false: its outputs are never
// given back, and taking a block would only drain the free list that a
// RunResult loop fills.
func (p *Prepared) run(ctx context.Context, name string, inputs map[string]*tensor.Tensor, reuse bool) (*Result, error) {
	p.mu.Lock()
	fn := p.funcs[name]
	p.mu.Unlock()
	if fn == nil {
		return nil, fmt.Errorf("%w: %s: no function %q", executor.ErrExecutor, p.name, name)
	}
	session, err := fn.ready()
	if err != nil {
		return nil, err
	}
	env, err := ir.BindInputs(name, fn.params, inputs)
	if err != nil {
		return nil, err
	}
	blk := fn.outputs(env, reuse)
	for i, port := range fn.sig.Inputs {
		blk.ins[i] = inputs[port.Value.Name]
	}
	if err := session.Run(ctx, blk.ins, blk.ptrs); err != nil {
		clear(blk.ins) // hold no caller's tensor in the free list
		fn.put(blk)
		return nil, fmt.Errorf("%s: %s: %w", p.name, name, err)
	}
	clear(blk.ins)
	n := len(fn.sig.Outputs)
	if fn.sig.Error != "" {
		if err := fn.sig.Err(blk.ptrs[n].I64); err != nil {
			fn.put(blk)
			return nil, err
		}
	}
	blk.res = Result{Outputs: blk.out, blk: blk}
	return &blk.res, nil
}

// Result is the outputs of one RunResult, by result name.
type Result struct {
	Outputs map[string]*tensor.Tensor
	blk     *outBlock
}

// Release gives the memory of r's outputs back to the function that
// produced them, for its next run with outputs of the same shapes. After
// Release neither r nor its tensors (nor slices of their data) may be
// used: their memory holds a later run's outputs. Release is idempotent.
func (r *Result) Release() {
	blk := r.blk
	if blk == nil {
		return
	}
	r.blk, r.Outputs = nil, nil
	blk.fn.put(blk)
}

// outBlock is the memory of one run's outputs (the rx_error output
// included), with the shapes it was allocated for, and the slices that
// are passed to Session.Run. Released blocks wait in their function's
// free list.
type outBlock struct {
	res  Result
	fn   *function
	ins  []*tensor.Tensor
	ptrs []*tensor.Tensor // the outputs in the model's order, rx_error last
	ts   []tensor.Tensor
	out  map[string]*tensor.Tensor
}

// fits reports whether b's outputs have the shapes env gives fn's.
func (b *outBlock) fits(fn *function, env map[string]int64) bool {
	for i, port := range fn.sig.Outputs {
		shape := b.ts[i].Shape
		for j, d := range port.Value.Type.Shape {
			want := d.Size
			if d.Sym != "" {
				want = env[d.Sym]
			}
			if int64(shape[j]) != want {
				return false
			}
		}
	}
	return true
}

// maxFree is how many released blocks a function keeps: enough for a
// few runs at once, and a bound on the memory it holds.
const maxFree = 4

// put keeps a released block for reuse. When maxFree are kept already
// the oldest is dropped, not blk: a run over more batch sizes than
// maxFree (the harness's batches, a benchmark's) must not leave the list
// full of the first sizes and make every later size allocate afresh.
func (fn *function) put(blk *outBlock) {
	fn.freeMu.Lock()
	defer fn.freeMu.Unlock()
	if len(fn.free) == maxFree {
		fn.free[0] = nil
		fn.free = append(fn.free[:0], fn.free[1:]...)
	}
	fn.free = append(fn.free, blk)
}

// take removes and returns a kept block whose outputs have the shapes env
// gives, or nil; a block of other shapes stays (a run at another batch
// may come next).
func (fn *function) take(env map[string]int64) *outBlock {
	fn.freeMu.Lock()
	defer fn.freeMu.Unlock()
	for i := len(fn.free) - 1; i >= 0; i-- {
		if blk := fn.free[i]; blk.fits(fn, env) {
			fn.free = slices.Delete(fn.free, i, i+1)
			return blk
		}
	}
	return nil
}

// outputs returns a block for fn's outputs at the shapes env gives
// them: with reuse a released one that fits, else a new one.
func (fn *function) outputs(env map[string]int64, reuse bool) *outBlock {
	if reuse {
		if blk := fn.take(env); blk != nil {
			return blk
		}
	}
	n := len(fn.sig.Outputs)
	m := n
	if fn.sig.Error != "" {
		m++
	}
	blk := &outBlock{fn: fn, ins: make([]*tensor.Tensor, len(fn.sig.Inputs)), ptrs: make([]*tensor.Tensor, m),
		ts: make([]tensor.Tensor, m), out: make(map[string]*tensor.Tensor, n)}
	for i, port := range fn.sig.Outputs {
		shape := ir.Concrete(port.Value.Type.Shape, env)
		if port.Value.Type.DType == ir.Int64 {
			blk.ts[i] = *tensor.NewInt64(shape...)
		} else {
			blk.ts[i] = *tensor.NewFloat32(shape...)
		}
		blk.ptrs[i] = &blk.ts[i]
		blk.out[port.Value.Name] = &blk.ts[i]
	}
	if m > n {
		blk.ts[n] = *tensor.NewInt64(3)
		blk.ptrs[n] = &blk.ts[n]
	}
	return blk
}

// Close releases every session; Run fails afterwards. Results not yet
// released stay valid.
func (p *Prepared) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, fn := range p.funcs {
		fn.mu.Lock()
		if fn.session != nil {
			_ = fn.session.Close()
		}
		fn.made, fn.session, fn.model = true, nil, nil
		fn.freeMu.Lock()
		fn.free = nil
		fn.freeMu.Unlock()
		if fn.err == nil {
			fn.err = ErrClosed
		}
		fn.mu.Unlock()
	}
	p.funcs = map[string]*function{}
	return nil
}

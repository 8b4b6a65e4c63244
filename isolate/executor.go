package isolate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/subproc"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// DefaultTimeout bounds one Run when Executor.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// helloTimeout bounds a worker's start-up (exec and hello).
const helloTimeout = 30 * time.Second

// WorkerArg is the argument that makes the rxeq binary serve the worker
// protocol (`rxeq worker`).
const WorkerArg = "worker"

// Executor runs the native backend in a worker process. It is a
// executor.Executor named "native" (or "torch", when Options.Runtime is
// executor.Torch) whose Prepared values also implement
// executor.Built. The zero value runs `<this binary> worker` in
// forced mode with DefaultTimeout.
type Executor struct {
	// Options are passed to native.Compile in the worker (CC, CacheDir,
	// Mode, Runtime, CXX, TorchThreads). Empty CC and CacheDir resolve there from $CC and $RXEQ_CACHE,
	// which the worker inherits.
	Options native.Options
	// Command is the worker's argv; default {os.Executable(), WorkerArg}.
	Command []string
	// Env is added to the worker's environment (which is otherwise this
	// process's).
	Env []string
	// Timeout bounds one Run; 0 means DefaultTimeout, negative no bound
	// (ctx still applies).
	Timeout time.Duration
	// Pool, when set, keeps a worker alive across programs: every program
	// is prepared in the pool's worker, and Prebuild builds several at
	// once (see Pool). When nil, each Prepare starts a worker of its own.
	Pool *Pool
	// ONNXRuntime, when set, makes e the ONNX Runtime executor it
	// describes ("onnxruntime", or "onnxruntime-noopt" by its Level) run
	// in worker processes instead of the native backend: the worker
	// loads the library ONNXRuntime.Library (once per worker), exports
	// the program's functions to ONNX and creates each function's
	// session at its first call (ort.Executor.Lazy), so that a crash or
	// a hang of ONNX Runtime, in a session's creation or in a run, fails
	// that call only, as a crash of native code does. Options do not
	// apply then, and there is nothing to Prebuild.
	ONNXRuntime *ort.Executor
	// Variant, when not "", is the executor's name as a variant of native
	// (or torch) that must give exactly its bits (native.Executor.Variant);
	// TwinOf then names native (or torch).
	Variant executor.Name
}

// Name returns "native" ("torch" for the torch runtime, the ONNX Runtime
// executor's name under ONNXRuntime), so results read as the in-process
// executor's.
func (e Executor) Name() executor.Name {
	if e.ONNXRuntime != nil {
		return e.ONNXRuntime.Name()
	}
	if e.Variant != "" {
		return e.Variant
	}
	return native.BaseName(e.Options)
}

// TwinOf returns the executor a Variant must agree with bit for bit
// (executor.Twin): native, or torch for the torch runtime; "" when e is
// not a variant.
func (e Executor) TwinOf() executor.Name {
	if e.ONNXRuntime != nil {
		return ""
	}
	return native.Executor{Options: e.Options, Variant: e.Variant}.TwinOf()
}

// Prepare starts a worker and has it generate, build and load p. A build
// error is returned as the worker reported it (same text and kind).
func (e Executor) Prepare(ctx context.Context, _ *program.File, p *ir.Program) (executor.Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: native: nil program", executor.ErrExecutor)
	}
	if e.Pool != nil {
		return e.preparePooled(ctx, p)
	}
	wp, err := encodeProgram(p)
	if err != nil {
		return nil, err
	}
	argv, err := e.argv()
	if err != nil {
		return nil, err
	}
	req := e.request(reqPrepare)
	req.Program = wp
	pr := &prepared{argv: argv, env: e.Env, timeout: e.timeout(), gate: newGate(e.Name()), path: e.Name(), req: req}
	w, err := pr.start(ctx)
	if err != nil {
		return nil, err
	}
	pr.w = w
	return pr, nil
}

// newGate returns the gate to a worker of executor name's code.
func newGate(name executor.Name) *subproc.Gate {
	return subproc.NewGate("the " + string(name) + " worker")
}

// prepared is one program in (successive) workers.
type prepared struct {
	argv    []string
	env     []string
	timeout time.Duration
	path    executor.Name // the executor's name, the Path of a Run that fails early
	req     request       // the prepare request, re-sent to every new worker
	gate    *subproc.Gate // one call at a time

	mu     sync.Mutex // guards w, closed, info, src
	w      *worker    // nil when there is none (crashed, timed out)
	closed bool
	info   native.BuildInfo
	src    []byte
}

// start starts a worker and prepares the program in it.
func (p *prepared) start(ctx context.Context) (*worker, error) {
	w, err := startWorker(ctx, p.path, p.argv, p.env, helloTimeout)
	if err != nil {
		return nil, err
	}
	var resp response
	if err := w.exchange(ctx, 0, &p.req, &resp); err != nil {
		return nil, fmt.Errorf("preparing in the worker: %w", err)
	}
	if resp.Err != nil {
		w.stop(time.Second)
		return nil, decodeError(resp.Err)
	}
	p.mu.Lock()
	p.info, p.src = resp.Info, resp.Source
	p.mu.Unlock()
	return w, nil
}

// live returns the current worker, starting a fresh one (and preparing the
// program in it) when the last one died. The caller holds the gate.
func (p *prepared) live(ctx context.Context) (*worker, error) {
	p.mu.Lock()
	w, closed := p.w, p.closed
	p.mu.Unlock()
	if closed {
		return nil, native.ErrClosed
	}
	if w != nil {
		return w, nil
	}
	w, err := p.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("restarting the %s worker: %w", p.path, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go w.stop(time.Second)
		return nil, native.ErrClosed
	}
	p.w = w
	return w, nil
}

// drop forgets w after it died or was killed.
func (p *prepared) drop(w *worker) {
	p.mu.Lock()
	if p.w == w {
		p.w = nil
	}
	p.mu.Unlock()
}

// Ready starts a new worker and prepares the program in it when the last
// one crashed or timed out (executor.Readier), so that the Run that
// follows pays only for running: under the harness the restart comes
// before the next case's clock starts, bounded by the worker's hello
// timeout and ctx, not by that case's timeout. It waits while another
// call holds the worker. A restart that fails returns its error, "restarting
// the native worker: …". Ready does nothing for a closed program (Run
// says so).
func (p *prepared) Ready(ctx context.Context, _ string) error {
	turn, err := p.gate.Enter(ctx, nameOr(ctx, "restarting the worker"))
	if err != nil {
		return err
	}
	defer turn.Leave()
	if _, err := p.live(ctx); err != nil && !errors.Is(err, native.ErrClosed) {
		return err
	}
	return nil
}

// Run sends one call to the worker. A crash or a timeout is returned as an
// error (ErrCrashed, ErrTimedOut, an *executor.ProcessError) and the next
// Run (or Ready) starts a new worker.
//
// Calls wait for the worker one at a time. A call whose ctx ends while it
// waits never ran: it returns an error wrapping executor.ErrNotRun (and
// ctx.Err()) that names the call holding the worker, e.g. "not run: the
// native worker was busy with s/f/b4/native (running for 30s; s/g/b1/native
// timed out after 30s while this case waited)", so the harness reports
// that case as not run instead of as a timeout of its own. A call is named
// by executor.CaseFrom(ctx), else by its function and input shapes.
func (p *prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	out := executor.Outcome{Path: p.path}
	turn, err := p.gate.Enter(ctx, callName(ctx, fn, inputs))
	if err != nil {
		return out, err
	}
	defer turn.Leave()
	w, err := p.live(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// The deadline came while a new worker was starting: the call
			// was never sent.
			return out, turn.NotStarted(ctx, "restarting the "+string(p.path)+" worker")
		}
		return out, err
	}
	var resp response
	err = w.exchange(ctx, p.timeout, &request{Kind: reqRun, Func: fn, Inputs: encodeTensors(inputs), Call: p.req.Options.Call()}, &resp)
	if err != nil {
		p.drop(w)
		timedOut := errors.Is(err, ErrTimedOut)
		if timedOut {
			turn.TimedOut(p.timeout)
		}
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed && !timedOut && ctx.Err() == nil {
			return out, native.ErrClosed
		}
		if ctx.Err() != nil {
			err = turn.Ran(err)
		}
		return out, err
	}
	return finish(out, resp, nil)
}

// callName names a call in messages: the harness case of ctx, else the
// function and the shapes of its inputs ("squash(w [8 4], x [4 8])").
func callName(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) string {
	if name := executor.CaseFrom(ctx); name != "" {
		return name
	}
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		if t := inputs[n]; t != nil {
			parts[i] = fmt.Sprintf("%s %v", n, t.Shape)
		} else {
			parts[i] = n + " nil"
		}
	}
	return fn + "(" + strings.Join(parts, ", ") + ")"
}

// Close ends the worker (a call in flight fails with native.ErrClosed).
// Closing twice is a no-op.
func (p *prepared) Close() error {
	p.mu.Lock()
	w := p.w
	p.w, p.closed = nil, true
	p.mu.Unlock()
	if w != nil {
		w.stop(time.Second)
	}
	return nil
}

// Source returns the C the worker generated and built.
func (p *prepared) Source() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.src...)
}

// Info returns how the worker built the program.
func (p *prepared) Info() native.BuildInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.info
}

var (
	_ executor.Built   = (*prepared)(nil)
	_ executor.Readier = (*prepared)(nil)
)

// NeedsCompiler returns true, unless e runs ONNX Runtime: the worker
// compiles and runs C.
func (e Executor) NeedsCompiler() bool { return e.ONNXRuntime == nil }

// Slot returns a copy of e for one goroutine of a campaign (the fuzzer's):
// it has a Pool of its own, so one worker serves every program the
// goroutine prepares, and it builds into buildDir when that is not "".
// The Pool is what releases it. (executor.Slotter)
func (e Executor) Slot(buildDir string) (executor.Executor, io.Closer) {
	e.Pool = NewPool()
	if buildDir != "" {
		e.Options.CacheDir = buildDir
	}
	return e, e.Pool
}

// ShareSlot returns a copy of e that uses slot's Pool, when slot is a
// Slot of an Executor of the same build configuration (native.Options
// without their call settings, Command, Env: native, for one of its
// bit-identical variants), so that one worker prepares each program once
// for both and runs each call with its own executor's settings (tile
// rows, the kernels' ISA). A crash or a hang of the copy's call is still
// its own (see Pool). It returns false, and e, when slot cannot serve e.
// (executor.SlotSharer)
func (e Executor) ShareSlot(slot executor.Executor) (executor.Executor, bool) {
	s, ok := slot.(Executor)
	if !ok || s.Pool == nil || e.ONNXRuntime != nil || s.ONNXRuntime != nil {
		return e, false
	}
	own := e
	own.Options.CacheDir = s.Options.CacheDir
	if configOf(own) != configOf(s) {
		return e, false
	}
	own.Pool = s.Pool
	return own, true
}

var (
	_ executor.SlotSharer   = Executor{}
	_ executor.Slotter      = Executor{}
	_ executor.Prebuilder   = Executor{}
	_ executor.CompilerUser = Executor{}
)

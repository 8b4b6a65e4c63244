package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
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
// harness.Executor named "native" whose Prepared values also implement
// harness.NativePrepared. The zero value runs `<this binary> worker` in
// forced mode with DefaultTimeout.
type Executor struct {
	// Options are passed to native.Compile in the worker (CC, CacheDir,
	// Mode). Empty CC and CacheDir resolve there from $CC and $RXEQ_CACHE,
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
}

// Name returns "native", so results read as the in-process backend's.
func (Executor) Name() string { return harness.PathNative }

// Prepare starts a worker and has it generate, build and load p. A build
// error is returned as the worker reported it (same text and kind).
func (e Executor) Prepare(ctx context.Context, _ *program.File, p *ir.Program) (harness.Prepared, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: native: nil program", harness.ErrExecutor)
	}
	wp, err := encodeProgram(p)
	if err != nil {
		return nil, err
	}
	argv := e.Command
	if len(argv) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%w: locating this binary: %v", ErrWorker, err)
		}
		argv = []string{self, WorkerArg}
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	pr := &prepared{argv: argv, env: e.Env, timeout: timeout, sem: make(chan struct{}, 1),
		req: request{Kind: reqPrepare, Program: wp, CC: e.Options.CC, Cache: e.Options.CacheDir, Mode: e.Options.Mode, CompileTimeout: e.Options.CompileTimeout}}
	w, err := pr.start(ctx)
	if err != nil {
		return nil, err
	}
	pr.w = w
	return pr, nil
}

// prepared is one program in (successive) workers.
type prepared struct {
	argv    []string
	env     []string
	timeout time.Duration
	req     request       // the prepare request, re-sent to every new worker
	sem     chan struct{} // one call at a time

	mu     sync.Mutex // guards w, closed, info, src
	w      *worker    // nil when there is none (crashed, timed out)
	closed bool
	info   native.BuildInfo
	src    []byte
}

// start starts a worker and prepares the program in it.
func (p *prepared) start(ctx context.Context) (*worker, error) {
	w, err := startWorker(ctx, p.argv, p.env, helloTimeout)
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
// program in it) when the last one died. The caller holds sem.
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
		return nil, fmt.Errorf("restarting the native worker: %w", err)
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

// Run sends one call to the worker. A crash or a timeout is returned as an
// error (ErrCrashed, ErrTimedOut) and the next Run starts a new worker.
func (p *prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (harness.Outcome, error) {
	out := harness.Outcome{Path: harness.PathNative}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return out, fmt.Errorf("waiting for the native worker: %w", ctx.Err())
	}
	defer func() { <-p.sem }()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	w, err := p.live(ctx)
	if err != nil {
		return out, err
	}
	var resp response
	err = w.exchange(ctx, p.timeout, &request{Kind: reqRun, Func: fn, Inputs: encodeTensors(inputs)}, &resp)
	if err != nil {
		p.drop(w)
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed && !errors.Is(err, ErrTimedOut) && ctx.Err() == nil {
			return out, native.ErrClosed
		}
		return out, err
	}
	if resp.Path != "" {
		out.Path = resp.Path
	}
	if resp.Err != nil {
		return out, decodeError(resp.Err)
	}
	outputs, err := decodeTensors(resp.Outputs)
	if err != nil {
		return out, err
	}
	out.Outputs = outputs
	return out, nil
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

var _ harness.NativePrepared = (*prepared)(nil)

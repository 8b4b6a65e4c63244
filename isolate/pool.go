package isolate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/subproc"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Pool keeps one worker process alive across programs, for a caller that
// prepares many small programs one after another (the fuzzer, the
// reducer): an Executor whose Pool is set prepares every program in the
// pool's worker, which holds any number of them, instead of starting a
// worker per program, and Prebuild builds several programs in that worker
// with one compiler run and one library (native.CompileBatch).
//
// Sharing a worker must not change what a program gives, so a crash or a
// timeout is attributed as if every program had had a worker of its own:
// when a call crashes or hangs in a worker where calls of other programs
// ran before, the worker is replaced and the call is run again alone, in a
// fresh worker that holds only its program, and what that run gives (a
// crash, a timeout, or outputs) is the call's result. A program whose
// worker died for another program's call is prepared again, alone, at its
// next call. A program whose batch fails to build is compiled alone by the
// worker (so a compile error is its own, with the text a prepare of it
// alone gives).
//
// A Pool serves one Executor build configuration (Options without their
// call settings, native.Options.Build; Command, Env): native and its
// bit-identical variants (native-avx2, native-sse2, native-c,
// native-tiled, which differ in native.Options.Call only) may share one
// (Executor.ShareSlot), each program then built and loaded once in the
// worker and each call run with its executor's settings. It is safe for
// concurrent use, calls being served one at a time. The zero Pool
// is not usable: call NewPool. Close stops its workers.
type Pool struct {
	mu      sync.Mutex
	main    *poolWorker   // the shared worker, or nil until one is needed
	workers []*poolWorker // every live worker, main included
	nextID  int
	closed  bool
	config  string // the executor configuration the pool serves

	// starting serialises starting the shared worker, so that callers
	// that find none at the same time start one between them.
	starting sync.Mutex
	// afterLookup, when set (by tests), runs in Prepare between finding
	// the program in the worker and returning the handle.
	afterLookup func()
}

// NewPool returns an empty pool; its first program starts its worker.
func NewPool() *Pool { return &Pool{} }

// poolWorker is one worker process of a pool and the programs it holds.
type poolWorker struct {
	w       *worker
	gate    *subproc.Gate       // one exchange at a time
	dead    bool                // it crashed, timed out or was stopped
	held    map[string]*pmember // by program key
	members map[*pmember]bool
	ranBy   *pooled // the first Prepared value whose calls ran in it
	mixed   bool    // calls of several Prepared values ran in it
	drop    []int   // IDs to release with the next request
	handles int     // live pooled Prepared values using it
}

// pmember is one program held by a pool worker.
type pmember struct {
	id      int
	key     string
	handles int
	err     *wireError // why it failed to build (then it is not held)
	info    native.BuildInfo
	src     []byte
}

// Close stops the pool's workers. Prepared values of the pool fail with
// native.ErrClosed afterwards. Closing twice is a no-op.
func (pl *Pool) Close() error {
	pl.mu.Lock()
	ws := pl.workers
	pl.workers, pl.main, pl.closed = nil, nil, true
	for _, pw := range ws {
		pw.dead = true
	}
	pl.mu.Unlock()
	for _, pw := range ws {
		pw.w.stop(time.Second)
	}
	return nil
}

// configOf names an executor's build configuration: a pool serves one.
// It leaves out what differs call by call (native.Options.Call: the tile
// rows and the kernels' ISA) and the variant's name, so that native and
// its bit-identical variants share a pool, its worker and each program
// built in it, every run request carrying its executor's call settings.
func configOf(e Executor) string {
	if e.ONNXRuntime != nil {
		return fmt.Sprintf("%s\x00%q\x00%q\x00%+v\x00%+v", e.Name(), e.Command, e.Env, e.Options, *e.ONNXRuntime)
	}
	return fmt.Sprintf("%s\x00%q\x00%q\x00%+v\x00%+v", native.BaseName(e.Options), e.Command, e.Env, e.Options.Build(), ort.Executor{})
}

// programKey identifies a program and the options it is built with.
func programKey(e Executor, wp *wireProgram) (string, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(wp); err != nil {
		return "", fmt.Errorf("%w: encoding a program: %v", ErrWorker, err)
	}
	h := sha256.New()
	h.Write([]byte(configOf(e)))
	h.Write(b.Bytes())
	return hex.EncodeToString(h.Sum(nil)), nil
}

// argv is the worker's command line.
func (e Executor) argv() ([]string, error) {
	if len(e.Command) > 0 {
		return e.Command, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, workerErr(e.Name(), "locating this binary: %v", err)
	}
	return []string{self, WorkerArg}, nil
}

// request returns a request of kind carrying e's build options (or its
// ONNX Runtime settings).
func (e Executor) request(kind string) request {
	r := request{Kind: kind, Options: e.Options}
	if e.ONNXRuntime != nil {
		o := *e.ONNXRuntime
		r.ORT = &o
	}
	return r
}

func (e Executor) timeout() time.Duration {
	if e.Timeout == 0 {
		return DefaultTimeout
	}
	return e.Timeout
}

// check records e's configuration as the pool's, or refuses a different
// one.
func (pl *Pool) check(e Executor) error {
	c := configOf(e)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return native.ErrClosed
	}
	if pl.config == "" {
		pl.config = c
	} else if pl.config != c {
		return fmt.Errorf("%w: a Pool serves one executor configuration; give each executor its own", executor.ErrExecutor)
	}
	return nil
}

// startWorker starts a worker for e; main says whether it becomes the
// pool's shared worker.
func (pl *Pool) startWorker(ctx context.Context, e Executor, main bool) (*poolWorker, error) {
	argv, err := e.argv()
	if err != nil {
		return nil, err
	}
	w, err := startWorker(ctx, e.Name(), argv, e.Env, helloTimeout)
	if err != nil {
		return nil, err
	}
	pw := &poolWorker{w: w, gate: newGate(e.Name()), held: map[string]*pmember{}, members: map[*pmember]bool{}}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		go w.stop(time.Second)
		return nil, native.ErrClosed
	}
	pl.workers = append(pl.workers, pw)
	if main {
		pl.main = pw
	}
	return pw, nil
}

// mainWorker returns the shared worker, starting one when there is none.
// Callers that find none at the same time wait for one start.
func (pl *Pool) mainWorker(ctx context.Context, e Executor) (*poolWorker, error) {
	if pw := pl.currentMain(); pw != nil {
		return pw, nil
	}
	pl.starting.Lock()
	defer pl.starting.Unlock()
	if pw := pl.currentMain(); pw != nil {
		return pw, nil
	}
	return pl.startWorker(ctx, e, true)
}

// currentMain returns the shared worker, or nil.
func (pl *Pool) currentMain() *poolWorker {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.main
}

// isClosed reports whether Close has been called.
func (pl *Pool) isClosed() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.closed
}

// take returns the member of pw that holds the program key with a handle
// reserved on it and on pw, or nil when pw does not hold the program, or
// the error the program's build gave (then nothing is reserved). Finding
// the member and reserving it are one step, so a concurrent Prebuild,
// which releases the members no handle uses, cannot release it in
// between; the reservation becomes the handle's in attach.
func (pl *Pool) take(pw *poolWorker, key string) (*pmember, *wireError) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	m := pw.held[key]
	switch {
	case m == nil:
		return nil, nil
	case m.err != nil:
		return nil, m.err
	}
	m.handles++
	pw.handles++
	return m, nil
}

// retire forgets a dead worker.
func (pl *Pool) retire(pw *poolWorker) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pw.dead = true
	if pl.main == pw {
		pl.main = nil
	}
	for i, x := range pl.workers {
		if x == pw {
			pl.workers = append(pl.workers[:i], pl.workers[i+1:]...)
			break
		}
	}
}

// exchange sends req to pw (with the pending drops) and reads the
// response, one exchange at a time. A worker that fails is retired. name
// names the call in the error of a call whose deadline comes while it
// waits (see subproc.Gate).
func (pl *Pool) exchange(ctx context.Context, pw *poolWorker, name string, timeout time.Duration, req *request, resp *response) error {
	turn, err := pw.gate.Enter(ctx, name)
	if err != nil {
		return err
	}
	defer turn.Leave()
	pl.mu.Lock()
	if pw.dead {
		pl.mu.Unlock()
		return errWorkerGone
	}
	req.Drop, pw.drop = pw.drop, nil
	pl.mu.Unlock()
	if err := pw.w.exchange(ctx, timeout, req, resp); err != nil {
		if errors.Is(err, ErrTimedOut) {
			turn.TimedOut(timeout)
		}
		pl.retire(pw)
		return err
	}
	return nil
}

// errClosedDuring is a call's error when Pool.Close stopped its worker
// under it: that is no crash of the program.
var errClosedDuring = fmt.Errorf("%w: the pool was closed during the call", native.ErrClosed)

// nameOr returns executor.CaseFrom(ctx), or what when it is "".
func nameOr(ctx context.Context, what string) string {
	if name := executor.CaseFrom(ctx); name != "" {
		return name
	}
	return what
}

// errWorkerGone: the worker died (for another call) before this exchange.
var errWorkerGone = errors.New("the native worker is gone")

// prepareIn prepares the program wp (key) alone in pw and returns its
// member with a handle reserved, as take does.
func (pl *Pool) prepareIn(ctx context.Context, e Executor, pw *poolWorker, key string, wp *wireProgram) (*pmember, error) {
	pl.mu.Lock()
	pl.nextID++
	m := &pmember{id: pl.nextID, key: key}
	pl.mu.Unlock()
	req := e.request(reqPrepare)
	req.ID, req.Program = m.id, wp
	var resp response
	if err := pl.exchange(ctx, pw, nameOr(ctx, "preparing a program"), 0, &req, &resp); err != nil {
		return nil, err
	}
	if resp.Err != nil {
		return nil, decodeError(resp.Err)
	}
	m.info, m.src = resp.Info, resp.Source
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if old := pw.held[key]; old != nil && old.handles == 0 {
		pw.drop = append(pw.drop, old.id)
		delete(pw.members, old)
	}
	pw.held[key] = m
	pw.members[m] = true
	m.handles++
	pw.handles++
	return m, nil
}

// Prebuild builds the programs ps in the pool's worker with one compiler
// run (see Pool), so that preparing them later costs no compile. Programs
// the worker already holds are skipped; programs it holds that no
// Prepared uses and that ps does not name are released, unless every
// program of ps is held already (a variant sharing its twin's pool,
// Executor.ShareSlot, prebuilding after the twin): then nothing happens.
// Prebuild is an optimisation: when it fails
// the programs are prepared singly as usual, so the error may be ignored.
// Without a Pool it does nothing.
func (e Executor) Prebuild(ctx context.Context, ps []*ir.Program) error {
	pl := e.Pool
	if pl == nil || len(ps) == 0 || e.ONNXRuntime != nil {
		return nil
	}
	if err := pl.check(e); err != nil {
		return err
	}
	pw, err := pl.mainWorker(ctx, e)
	if err != nil {
		return err
	}
	req := e.request(reqBuild)
	// The programs asked for, once each, with their keys.
	var wps []*wireProgram
	var keys []string
	wanted := map[string]bool{}
	for _, p := range ps {
		wp, err := encodeProgram(p)
		if err != nil {
			return err
		}
		key, err := programKey(e, wp)
		if err != nil {
			return err
		}
		if !wanted[key] {
			wanted[key] = true
			wps, keys = append(wps, wp), append(keys, key)
		}
	}
	pl.mu.Lock()
	var missing []string
	for i, key := range keys {
		if _, have := pw.held[key]; !have {
			missing = append(missing, key)
			pl.nextID++
			req.IDs = append(req.IDs, pl.nextID)
			req.Programs = append(req.Programs, wps[i])
		}
	}
	if len(missing) == 0 {
		// Everything is held: the same programs prebuilt again, by a
		// variant sharing the pool with its twin (configOf) after the
		// twin's Prebuild. Nothing is released, not even the programs it
		// did not ask for: the twin's Prebuild asked for them.
		pl.mu.Unlock()
		return nil
	}
	for m := range pw.members {
		if m.handles == 0 && !wanted[m.key] {
			pw.drop = append(pw.drop, m.id)
			delete(pw.members, m)
			if pw.held[m.key] == m {
				delete(pw.held, m.key)
			}
		}
	}
	pl.mu.Unlock()
	keys = missing
	var resp response
	if err := pl.exchange(ctx, pw, nameOr(ctx, fmt.Sprintf("building %d programs", len(keys))), 0, &req, &resp); err != nil {
		return err
	}
	if resp.Err != nil {
		return decodeError(resp.Err)
	}
	if len(resp.Members) != len(keys) {
		return fmt.Errorf("%w: a build of %d programs answered %d", ErrWorker, len(keys), len(resp.Members))
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for i, key := range keys {
		r := resp.Members[i]
		m := &pmember{id: req.IDs[i], key: key, err: r.Err, info: r.Info, src: r.Source}
		pw.held[key] = m
		pw.members[m] = true
	}
	return nil
}

// preparePooled is Executor.Prepare with a Pool.
func (e Executor) preparePooled(ctx context.Context, p *ir.Program) (executor.Prepared, error) {
	pl := e.Pool
	if err := pl.check(e); err != nil {
		return nil, err
	}
	wp, err := encodeProgram(p)
	if err != nil {
		return nil, err
	}
	key, err := programKey(e, wp)
	if err != nil {
		return nil, err
	}
	pw, err := pl.mainWorker(ctx, e)
	if err != nil {
		return nil, err
	}
	m, failed := pl.take(pw, key)
	if failed != nil {
		return nil, decodeError(failed)
	}
	if m == nil {
		if m, err = pl.prepareIn(ctx, e, pw, key, wp); err != nil {
			return nil, err
		}
	}
	if pl.afterLookup != nil {
		pl.afterLookup()
	}
	h := &pooled{e: e, pl: pl, key: key, wp: wp}
	pl.mu.Lock()
	h.attach(pw, m)
	pl.mu.Unlock()
	return h, nil
}

// pooled is a program prepared in a Pool.
type pooled struct {
	e   Executor
	pl  *Pool
	key string
	wp  *wireProgram

	// Guarded by pl.mu.
	pw     *poolWorker
	m      *pmember
	closed bool
	info   native.BuildInfo // the last member's, kept after Close
	src    []byte
	// log is the calls since the program's (virtual) worker of its own
	// started, which a call run again alone replays first; logIn is the
	// worker they all ran in, nil when they ran in several.
	log   []*request
	logIn *poolWorker
}

// attach makes pw's member m, reserved by take or prepareIn, the handle's
// program. The caller holds pl.mu.
func (h *pooled) attach(pw *poolWorker, m *pmember) {
	h.pw, h.m = pw, m
	h.info, h.src = m.info, m.src
}

// detach undoes attach, releasing the member (and stopping a worker of
// no use) when nothing else uses it. The caller holds pl.mu; a worker to
// stop is returned.
func (h *pooled) detach() *poolWorker {
	pw, m := h.pw, h.m
	if pw == nil {
		return nil
	}
	h.pw, h.m = nil, nil
	pw.handles--
	m.handles--
	if m.handles == 0 && !pw.dead {
		pw.drop = append(pw.drop, m.id)
		delete(pw.members, m)
		if pw.held[m.key] == m {
			delete(pw.held, m.key)
		}
	}
	if pw.handles == 0 && pw != h.pl.main && !pw.dead {
		pw.dead = true
		for i, x := range h.pl.workers {
			if x == pw {
				h.pl.workers = append(h.pl.workers[:i], h.pl.workers[i+1:]...)
				break
			}
		}
		return pw
	}
	return nil
}

// Ready prepares the program again in the pool's shared worker (starting
// one) when the worker it was in died for a call (executor.Readier), so
// that the Run that follows pays only for running: under the harness this
// comes before the next case's clock starts. Ready does nothing for a
// closed handle or one whose worker lives.
func (h *pooled) Ready(ctx context.Context, _ string) error {
	h.pl.mu.Lock()
	pw, closed := h.pw, h.closed
	h.pl.mu.Unlock()
	if closed || (pw != nil && !pw.isDead(h.pl)) {
		return nil
	}
	npw, err := h.pl.mainWorker(ctx, h.e)
	if err == nil {
		err = h.reattach(ctx, npw)
	}
	if err != nil {
		return fmt.Errorf("restarting the %s worker: %w", h.e.Name(), err)
	}
	return nil
}

// Run runs fn in the program's worker (see Pool for crashes and
// timeouts).
func (h *pooled) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	return h.run(ctx, fn, callName(ctx, fn, inputs), inputs)
}

// run is Run of the call name.
func (h *pooled) run(ctx context.Context, fn, name string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	out := executor.Outcome{Path: h.e.Name()}
	h.pl.mu.Lock()
	pw, closed := h.pw, h.closed
	h.pl.mu.Unlock()
	if closed {
		return out, native.ErrClosed
	}
	if pw == nil || pw.isDead(h.pl) {
		// The worker died for another call: prepare the program again in
		// the shared worker.
		npw, err := h.pl.mainWorker(ctx, h.e)
		if err == nil {
			err = h.reattach(ctx, npw)
		}
		if err != nil {
			return out, fmt.Errorf("restarting the %s worker: %w", h.e.Name(), err)
		}
		pw = npw
	}
	req := &request{Kind: reqRun, Func: fn, Inputs: encodeTensors(inputs), Call: h.e.Options.Call()}
	var resp response
	err := h.pl.exchange(ctx, pw, name, h.e.timeout(), h.withID(req), &resp)
	if err != nil && h.pl.isClosed() {
		return out, errClosedDuring
	}
	if errors.Is(err, errWorkerGone) {
		return h.run(ctx, fn, name, inputs)
	}
	if lost(ctx, err) {
		if !h.faithful(pw) {
			// Other programs' calls ran in this worker, or this program's
			// earlier calls ran elsewhere: run the call again as it would
			// have run in a worker of the program's own.
			return h.alone(ctx, name, req)
		}
		h.forget()
		return out, err
	}
	if err == nil {
		h.record(pw, req)
	}
	return finish(out, resp, err)
}

// lost reports whether err is a crash or a timeout of the worker (not
// the end of ctx).
func lost(ctx context.Context, err error) bool {
	return (errors.Is(err, ErrCrashed) || errors.Is(err, ErrTimedOut)) && ctx.Err() == nil
}

// withID sets req's program ID to the handle's current one.
func (h *pooled) withID(req *request) *request {
	h.pl.mu.Lock()
	defer h.pl.mu.Unlock()
	req.ID = h.m.id
	return req
}

// record notes that req ran in pw: the handle's call log since its
// (virtual) worker of its own started.
func (h *pooled) record(pw *poolWorker, req *request) {
	h.pl.mu.Lock()
	defer h.pl.mu.Unlock()
	if len(h.log) == 0 {
		h.logIn = pw
	} else if h.logIn != pw {
		h.logIn = nil
	}
	h.log = append(h.log, req)
	if pw.ranBy == nil {
		pw.ranBy = h
	} else if pw.ranBy != h {
		pw.mixed = true
	}
}

// forget empties the call log: the call crashed or hung where the
// program's own worker would have, and that worker would now be a new
// one.
func (h *pooled) forget() {
	h.pl.mu.Lock()
	defer h.pl.mu.Unlock()
	h.log, h.logIn = nil, nil
}

// faithful reports whether what happened in pw is what would have
// happened in a worker of the program's own: only its calls ran there, and
// all its logged calls did.
func (h *pooled) faithful(pw *poolWorker) bool {
	h.pl.mu.Lock()
	defer h.pl.mu.Unlock()
	if pw.mixed || (pw.ranBy != nil && pw.ranBy != h) {
		return false
	}
	return len(h.log) == 0 || h.logIn == pw
}

// finish turns a run's response into its outcome.
func finish(out executor.Outcome, resp response, err error) (executor.Outcome, error) {
	if err != nil {
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

func (pw *poolWorker) isDead(pl *Pool) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pw.dead
}

// reattach prepares the program in pw (unless pw holds it) and moves the
// handle there.
func (h *pooled) reattach(ctx context.Context, pw *poolWorker) error {
	m, _ := h.pl.take(pw, h.key)
	if m == nil {
		// Not held, or its batch failed to build: prepare it alone.
		var err error
		if m, err = h.pl.prepareIn(ctx, h.e, pw, h.key, h.wp); err != nil {
			return err
		}
	}
	h.pl.mu.Lock()
	stop := h.detach()
	h.attach(pw, m)
	h.pl.mu.Unlock()
	if stop != nil {
		go stop.w.stop(time.Second)
	}
	return nil
}

// alone runs req as it would run in a worker of the program's own: in a
// fresh worker that holds only this program, after the calls the
// program's own worker would have served before it (the call log). The
// handle keeps using that worker.
func (h *pooled) alone(ctx context.Context, name string, req *request) (executor.Outcome, error) {
	out := executor.Outcome{Path: h.e.Name()}
	pw, err := h.pl.startWorker(ctx, h.e, false)
	if err != nil {
		return out, fmt.Errorf("restarting the %s worker: %w", h.e.Name(), err)
	}
	if err := h.reattach(ctx, pw); err != nil {
		h.pl.mu.Lock()
		unused := pw.handles == 0
		h.pl.mu.Unlock()
		if unused {
			h.pl.retire(pw)
			go pw.w.stop(time.Second)
		}
		return out, fmt.Errorf("restarting the %s worker: %w", h.e.Name(), err)
	}
	h.pl.mu.Lock()
	log := h.log
	h.log, h.logIn = nil, nil
	h.pl.mu.Unlock()
	var resp response
	for _, r := range append(log, req) {
		resp = response{}
		err = h.pl.exchange(ctx, pw, name, h.e.timeout(), h.withID(r), &resp)
		if err != nil && h.pl.isClosed() {
			return out, errClosedDuring
		}
		if err != nil {
			if lost(ctx, err) {
				h.forget()
			}
			return out, err
		}
		h.record(pw, r)
	}
	return finish(out, resp, nil)
}

// Close releases the program (a worker of its own is stopped).
func (h *pooled) Close() error {
	h.pl.mu.Lock()
	if h.closed {
		h.pl.mu.Unlock()
		return nil
	}
	h.closed = true
	h.log, h.logIn = nil, nil
	stop := h.detach()
	h.pl.mu.Unlock()
	if stop != nil {
		stop.w.stop(time.Second)
	}
	return nil
}

// Source returns the C the worker generated and built.
func (h *pooled) Source() []byte {
	h.pl.mu.Lock()
	defer h.pl.mu.Unlock()
	return append([]byte(nil), h.src...)
}

// Info returns how the worker built the program.
func (h *pooled) Info() native.BuildInfo {
	h.pl.mu.Lock()
	defer h.pl.mu.Unlock()
	return h.info
}

var (
	_ executor.Built   = (*pooled)(nil)
	_ executor.Readier = (*pooled)(nil)
)

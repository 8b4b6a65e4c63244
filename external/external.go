package external

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/printer"
	"hash/crc32"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/subproc"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Error kinds of external executors. Each failure of one case wraps one of
// them; the case fails (or, for executor.ErrUnserved, is skipped) and the
// run goes on. ErrStart, ErrCrashed, ErrTimedOut and ErrProtocol wrap the
// kinds every executor shares (executor.ErrStart, …), so errors.Is matches
// either.
var (
	// ErrStart: the command could not be started, or did not send
	// a valid hello.
	ErrStart = fmt.Errorf("external executor %w", executor.ErrStart)
	// ErrCrashed: the process exited during a call.
	ErrCrashed = fmt.Errorf("external executor %w", executor.ErrCrashed)
	// ErrTimedOut: a call outlived Options.Timeout; the
	// process was killed.
	ErrTimedOut = fmt.Errorf("external executor %w", executor.ErrTimedOut)
	// ErrProtocol: the executor broke rxeq.executor/v1: bytes that are not
	// a frame (something printed to stdout), a malformed or unexpected
	// message, a wrong id, a missing input checksum. The process is killed.
	ErrProtocol = fmt.Errorf("executor %w", executor.ErrProtocol)
	// ErrOutput: the result is well-formed but its outputs are not
	// the function's: a missing or extra output, a wrong dtype or shape.
	// It wraps executor.ErrRejected.
	ErrOutput = fmt.Errorf("%w: wrong outputs from the executor", executor.ErrRejected)
	// ErrInputModified: the executor's checksum of an input after the call
	// differs from the checksum of the bytes sent: it wrote into an input.
	// It wraps executor.ErrRejected.
	ErrInputModified = fmt.Errorf("%w: the executor modified an input", executor.ErrRejected)
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one prepare or run of an external
	// executor. It is below DefaultCaseTimeout, so that a hung executor
	// is killed, its case fails with ErrTimedOut and the process is
	// restarted before the runner gives up on the case.
	DefaultTimeout = time.Minute
	// DefaultStartTimeout bounds starting an external executor
	// until its hello (importing a framework takes seconds).
	DefaultStartTimeout = time.Minute
)

// Options describe an external executor: a program that speaks
// rxeq.executor/v1 over its stdin and stdout (docs/executor-protocol.md).
type Options struct {
	// Name is the executor's name in options, results and reports. It must
	// be a valid executor name (executor.ValidName).
	Name string
	// Command is the argv of the process (no shell is involved).
	Command []string
	// Env is added to the process's environment (otherwise this one's).
	Env []string
	// Dir is its working directory ("" for this process's).
	Dir string
	// Timeout bounds one prepare or run; 0 means DefaultTimeout,
	// negative no bound (the context still applies).
	Timeout time.Duration
	// StartTimeout bounds the start until the hello; 0 means
	// DefaultStartTimeout, or Timeout when that is positive and shorter
	// (so `rxeq run --timeout 2s` bounds a silent executor's hello by 2s
	// too). It is the executor's own bound, not a case's: a restart after
	// a crash, a timeout or a protocol violation happens in Ready, before
	// the next case's clock starts (see Executor). A framework that takes
	// longer to start than a short Timeout needs a StartTimeout of its own
	// (`rxeq run --timeout 5s --start-timeout 30s`).
	StartTimeout time.Duration
	// MaxPayload bounds the tensor bytes of one message from the
	// executor; 0 means 4 GiB.
	MaxPayload int64
	// Functions maps a program's function names to the executor's own
	// (score2 → my_score): the executor sees its names everywhere, in
	// prepare's function list, in run, and in what its hello serves. A
	// function not in the map keeps its name.
	Functions map[string]string
	// Generate, when set, makes the code sent with every prepare message
	// (its "module" field): rxeq's generated-code executors (pytorch,
	// torchscript, numpy) send the program exported as Python this way.
	// An error fails the Prepare with its text.
	Generate func(f *program.File, p *ir.Program) (*Module, error)
}

// remote returns the executor's name for program function fn.
func (o Options) remote(fn string) string {
	if r, ok := o.Functions[fn]; ok && r != "" {
		return r
	}
	return fn
}

// ParseSpec reads "NAME=COMMAND", the value of `rxeq run
// --executor`. COMMAND is split into words as a shell would split it for
// quotes and backslashes (SplitCommand), and run without a shell.
func ParseSpec(spec string) (Options, error) {
	name, command, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok || !executor.ValidName(name) {
		return Options{}, fmt.Errorf("%w: executor %q: want NAME=COMMAND with NAME a letter followed by letters, digits, _ . -", executor.ErrOptions, spec)
	}
	argv, err := SplitCommand(command)
	if err != nil {
		return Options{}, fmt.Errorf("%w: executor %s: %v", executor.ErrOptions, name, err)
	}
	if len(argv) == 0 {
		return Options{}, fmt.Errorf("%w: executor %s: empty command", executor.ErrOptions, name)
	}
	return Options{Name: name, Command: argv}, nil
}

// SplitCommand splits a command line into words: blanks separate words,
// 'single quotes' keep everything literally, "double quotes" keep blanks
// and honour \" and \\, and a backslash outside quotes escapes the next
// character. There is no expansion of variables, globs or ~.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing \\ in %q", s)
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// Executor runs programs in a subprocess that speaks
// rxeq.executor/v1 (docs/executor-protocol.md): a model author's PyTorch
// or NumPy code behind python/rxeq_executor.py, or any program that
// implements the protocol.
//
// One process serves every program the executor prepares (each under its
// own program id), one call at a time; it is started by the first Prepare
// and kept until Close, so a framework is imported once per run. When a
// call crashes the process, outlives Timeout, or breaks the protocol, the
// process is killed, that call fails with an error wrapping
// ErrCrashed, ErrTimedOut or ErrProtocol (with the tail of
// the process's stderr), and the next call starts a fresh process and
// prepares its program there again. Under the harness that next call is
// the next case's Ready (executor.Readier), before its clock starts: the
// restart is bounded by Options.StartTimeout (the hello) and
// Options.Timeout (the prepare), not by the case timeout, so the fault is
// charged to the case that caused it and not to the one after.
//
// Around each run the executor checks, on the harness side: the inputs
// against the signature (ir.BindInputs, so a bad input fails with the same
// text as in every executor); that the function is served (else
// ErrUnserved, reported as a skipped case); that the result names exactly
// the function's outputs with its dtypes and the shapes the inputs imply
// (else ErrOutput); and that the CRC-32 the executor reports for
// each input after the call equals that of the bytes sent (else
// ErrInputModified). Across a process boundary the runner's own input
// digests cannot see a write into the executor's copy, so the protocol
// makes the executor report it. Runtime errors come back with a kind and
// the shared text and are rebuilt as *ir.RuntimeError values, so they
// compare with the oracle's like any executor's.
//
// Create one with New; Close it when done (a process left
// running exits when rxeq does: its stdin closes, and on Linux it gets
// SIGKILL when its parent dies).
type Executor struct {
	opts Options
	gate *subproc.Gate // one call at a time

	mu       sync.Mutex // guards the fields below
	proc     *extProc   // nil when none is running
	programs map[int]*prepareMsg
	nextProg int
	closed   bool
}

// New checks opts and returns an executor; no process
// starts until the first Prepare.
func New(opts Options) (*Executor, error) {
	if !executor.ValidName(opts.Name) {
		return nil, fmt.Errorf("%w: external executor name %q: want a letter followed by letters, digits, _ . -", executor.ErrOptions, opts.Name)
	}
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, fmt.Errorf("%w: external executor %s: no command", executor.ErrOptions, opts.Name)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
		if opts.Timeout > 0 {
			opts.StartTimeout = min(opts.StartTimeout, opts.Timeout)
		}
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = defaultMaxPayload
	}
	opts.Command = slices.Clone(opts.Command)
	return &Executor{opts: opts, gate: subproc.NewGate("the external executor " + opts.Name), programs: map[int]*prepareMsg{}}, nil
}

// Name returns the executor's name.
func (e *Executor) Name() executor.Name { return executor.Name(e.opts.Name) }

// Command returns the executor's argv.
func (e *Executor) Command() []string { return slices.Clone(e.opts.Command) }

// Close stops the process: a close message, then SIGKILL after a grace
// period; a process in the middle of a call is killed at once (that call
// fails). Prepare and Run fail afterwards. Closing twice is a no-op.
func (e *Executor) Close() error {
	e.mu.Lock()
	p := e.proc
	e.proc, e.closed = nil, true
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	if turn, ok := e.gate.TryEnter("closing " + e.opts.Name); ok {
		defer turn.Leave()
		p.stop(2 * time.Second)
	} else {
		p.Kill()
	}
	return nil
}

// Prepare sends the program (source and checked signatures) to the
// executor, starting its process if none runs, and waits for its ready
// message. An error message from the executor fails the preparation with
// its text.
func (e *Executor) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	if f == nil || p == nil {
		return nil, fmt.Errorf("%w: %s: nil program", executor.ErrExecutor, e.Name())
	}
	msg := buildPrepare(f, p)
	for i := range msg.Functions {
		msg.Functions[i].Name = e.opts.remote(msg.Functions[i].Name)
	}
	if e.opts.Generate != nil {
		m, err := e.opts.Generate(f, p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", executor.ErrExecutor, e.Name(), err)
		}
		msg.Module = m
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, fmt.Errorf("%w: %s is closed", executor.ErrExecutor, e.Name())
	}
	msg.Program = e.nextProg
	e.nextProg++
	e.programs[msg.Program] = msg
	e.mu.Unlock()

	ep := &prepared{e: e, id: msg.Program, file: f}
	err := e.call(ctx, callName(ctx, "preparing "+f.Name), func(ctx context.Context, proc *extProc) error {
		ep.served = proc.hello.Functions
		ep.unserved = proc.prepared[msg.Program]
		ep.versions = versionText(proc.hello.Versions)
		return nil
	}, msg.Program)
	if err != nil {
		e.forget(msg.Program)
		return nil, err
	}
	return ep, nil
}

// forget drops a program from the executor's list.
func (e *Executor) forget(id int) {
	e.mu.Lock()
	delete(e.programs, id)
	e.mu.Unlock()
}

// callName names a call in messages: the harness case of ctx, else
// what.
func callName(ctx context.Context, what string) string {
	if name := executor.CaseFrom(ctx); name != "" {
		return name
	}
	return what
}

// call runs fn with the live process, started (and with program prog
// prepared) as needed, one call at a time; name names the call (callName).
// A call whose ctx ends while it waits for the process fails with an
// error wrapping executor.ErrNotRun that names the call holding it (see
// subproc.Gate). A process that failed is dropped, so the next call
// starts a new one.
func (e *Executor) call(ctx context.Context, name string, fn func(context.Context, *extProc) error, prog int) error {
	turn, err := e.gate.Enter(ctx, name)
	if err != nil {
		return err
	}
	defer turn.Leave()
	err = e.callIn(ctx, fn, prog)
	if errors.Is(err, subproc.ErrUndelivered) && ctx.Err() == nil {
		// The process exited between messages, before it read this
		// call's request: the call played no part in it. It goes to a
		// new process, once.
		err = e.callIn(ctx, fn, prog)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrStart) && ctx.Err() != nil:
		// The deadline came while the process was starting: the call was
		// never sent.
		return turn.NotStarted(ctx, "starting the external executor "+e.opts.Name)
	case ctx.Err() != nil:
		return turn.Ran(err)
	case errors.Is(err, executor.ErrTimedOut):
		turn.TimedOut(e.opts.Timeout)
	}
	return err
}

// callIn is call once the call holds the process.
func (e *Executor) callIn(ctx context.Context, fn func(context.Context, *extProc) error, prog int) error {
	e.mu.Lock()
	proc, closed, msg := e.proc, e.closed, e.programs[prog]
	e.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: %s is closed", executor.ErrExecutor, e.Name())
	}
	if msg == nil {
		return fmt.Errorf("%w: %s: program %d was closed", executor.ErrExecutor, e.Name(), prog)
	}
	if proc != nil && (!proc.Alive() || proc.dirty()) {
		// Gone, or it wrote after its last answer: a request would be
		// answered by those bytes. Neither is this call's doing.
		e.drop(proc)
		proc = nil
	}
	if proc == nil {
		var err error
		proc, err = startExtProc(ctx, e.opts.Name, e.opts.Command, e.opts.Env, e.opts.Dir, e.opts.StartTimeout, e.opts.MaxPayload)
		if err != nil {
			return err
		}
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			proc.stop(time.Second)
			return fmt.Errorf("%w: %s is closed", executor.ErrExecutor, e.Name())
		}
		e.proc = proc
		e.mu.Unlock()
	}
	if _, ok := proc.prepared[prog]; !ok {
		if err := e.prepareIn(ctx, proc, msg); err != nil {
			return err
		}
	}
	err := fn(ctx, proc)
	if err != nil && !proc.Alive() {
		e.drop(proc)
	}
	return err
}

// drop forgets proc after it died or was killed.
func (e *Executor) drop(proc *extProc) {
	proc.Kill()
	e.mu.Lock()
	if e.proc == proc {
		e.proc = nil
	}
	e.mu.Unlock()
}

// prepareIn sends msg to proc and records the functions it does not
// serve.
func (e *Executor) prepareIn(ctx context.Context, proc *extProc, msg *prepareMsg) error {
	proc.nextID++
	msg.ID = proc.nextID
	what := "the answer to prepare " + msg.File
	m, err := proc.exchange(ctx, e.opts.Timeout, what, nil, func(w *bufio.Writer) error { return writeFrame(w, msg) })
	if err == nil {
		err = checkAnswer(proc, m, msg.ID, what, msgReady)
	}
	if err != nil {
		e.drop(proc)
		return err
	}
	if m.Type == msgError {
		return fmt.Errorf("%w: %s could not prepare %s: %s", executor.ErrExecutor, e.Name(), msg.File, m.Message)
	}
	unserved := map[string]string{}
	for fn, why := range m.Unserved {
		unserved[fn] = why
	}
	proc.prepared[msg.Program] = unserved
	return nil
}

// checkAnswer checks an answer's id and type (want, or error); a mismatch
// is a protocol violation.
func checkAnswer(proc *extProc, m *inMsg, id uint64, what, want string) error {
	switch {
	case m.Type != want && m.Type != msgError:
		return fmt.Errorf("%w: %s sent a %q message while rxeq waited for %s (a %q or %q)", ErrProtocol, proc.name, m.Type, what, want, msgError)
	case m.ID == nil:
		return fmt.Errorf("%w: %s sent a %q message without the request's id %d", ErrProtocol, proc.name, m.Type, id)
	case *m.ID != id:
		return fmt.Errorf("%w: %s answered request %d while rxeq waited for %s (id %d)", ErrProtocol, proc.name, *m.ID, what, id)
	}
	return nil
}

// buildPrepare turns a program into a prepare message.
func buildPrepare(f *program.File, p *ir.Program) *prepareMsg {
	msg := &prepareMsg{Type: msgPrepare, File: f.Name, Scenario: f.ScenarioName(), Functions: []wireFunc{}}
	if f.AST != nil && f.Fset != nil {
		var b bytes.Buffer
		cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
		if cfg.Fprint(&b, f.Fset, f.AST) == nil {
			msg.Source = b.String()
		}
	}
	params := func(vs []*program.Var) []wireParam {
		out := []wireParam{}
		for _, v := range vs {
			shape := []any{}
			for _, d := range v.Type.Shape {
				if d.IsSym() {
					shape = append(shape, d.Sym)
				} else {
					shape = append(shape, d.Size)
				}
			}
			out = append(out, wireParam{Name: v.Name, DType: v.Type.DType.String(), Shape: shape})
		}
		return out
	}
	for _, fn := range f.Funcs {
		wf := wireFunc{Name: fn.Name, Params: params(fn.Params), Results: params(fn.Results), Checked: []wireSite{}}
		if irf := p.Func(fn.Name); irf != nil {
			ir.Walk(irf.Body, func(in ir.Instr) {
				if op, ok := in.(*ir.Op); ok && op.Site != nil {
					wf.Checked = append(wf.Checked, wireSite{Builtin: op.Site.Builtin, LHS: op.Site.LHS, Pos: op.Site.Pos})
				}
			})
		}
		msg.Functions = append(msg.Functions, wf)
	}
	return msg
}

// prepared is one program of an Executor.
type prepared struct {
	e    *Executor
	id   int
	file *program.File
	// What the process that prepared it said it serves: served nil means
	// every function; unserved gives reasons.
	served   []string
	unserved map[string]string
	versions string // from the hello's versions: "numpy 1.24.2, python 3.11.2"
	closed   sync.Once
}

// ServedByName returns the functions the executor's hello listed (it
// serves those by name: executor.ByName), or nil when its hello listed
// none and it serves whatever program it is given.
func (p *prepared) ServedByName() []string { return slices.Clone(p.served) }

// Framework returns the versions the executor's hello named ("numpy
// 1.24.2, python 3.11.2, torch 1.13.0"), "" when it named none
// (executor.FrameworkReporter).
func (p *prepared) Framework() string { return p.versions }

// versionText prints a hello's versions sorted by name.
func versionText(v map[string]string) string {
	parts := make([]string, 0, len(v))
	for _, k := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, k+" "+v[k])
	}
	return strings.Join(parts, ", ")
}

// Serves reports whether the executor serves fn, and if not, why.
func (p *prepared) serves(fn string) (bool, string) {
	if r := p.e.opts.remote(fn); r != fn {
		if ok, why := p.servesRemote(r); !ok {
			return false, fmt.Sprintf("%s (the name of %s under the executor's function map)", why, fn)
		}
		return true, ""
	}
	return p.servesRemote(fn)
}

// servesRemote is serves for the executor's own name fn.
func (p *prepared) servesRemote(fn string) (bool, string) {
	if why, ok := p.unserved[fn]; ok {
		return false, fmt.Sprintf("%s does not serve %s: %s", p.e.Name(), fn, why)
	}
	if p.served != nil && !slices.Contains(p.served, fn) {
		list := "no functions"
		if len(p.served) > 0 {
			list = strings.Join(p.served, ", ")
		}
		return false, fmt.Sprintf("%s does not serve %s (it serves %s)", p.e.Name(), fn, list)
	}
	return true, ""
}

// Ready starts the executor's process when none is running (the last
// one crashed, timed out or broke the protocol, or exited between
// messages) and prepares the program in it again, so that the Run of fn
// that follows pays only for running (executor.Readier). It waits while
// another call holds the process: that wait is not the case's either. The
// start is bounded by Options.StartTimeout and the prepare by
// Options.Timeout, and ctx; a start that fails returns its error (ErrStart,
// ErrTimedOut, …). Ready does nothing for a function the program does not
// have or the executor does not serve (Run says so).
func (p *prepared) Ready(ctx context.Context, fn string) error {
	if p.file.Func(fn) == nil {
		return nil
	}
	if ok, _ := p.serves(fn); !ok {
		return nil
	}
	turn, err := p.e.gate.Enter(ctx, callName(ctx, "readying "+p.file.Name))
	if err != nil {
		return err
	}
	defer turn.Leave()
	noop := func(context.Context, *extProc) error { return nil }
	err = p.e.callIn(ctx, noop, p.id)
	if errors.Is(err, subproc.ErrUndelivered) && ctx.Err() == nil {
		err = p.e.callIn(ctx, noop, p.id)
	}
	if err != nil {
		return fmt.Errorf("starting the external executor %s for %s: %w", p.e.opts.Name, fn, err)
	}
	return nil
}

var _ executor.Readier = (*prepared)(nil)

// Run sends one call to the executor and checks its answer (see
// Executor).
func (p *prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	name := p.e.opts.Name
	out := executor.Outcome{Path: p.e.Name()}
	pf := p.file.Func(fn)
	if pf == nil {
		return out, fmt.Errorf("%w: %s: no function %q", executor.ErrExecutor, name, fn)
	}
	if ok, why := p.serves(fn); !ok {
		return out, fmt.Errorf("%w: %s", executor.ErrUnserved, why)
	}
	params := pf.ParamList()
	env, err := ir.BindInputs(fn, params, inputs)
	if err != nil {
		return out, err
	}
	msg := &runMsg{Type: msgRun, Program: p.id, Function: p.e.opts.remote(fn), Tensors: []wireTensor{}}
	var payloads [][]byte
	sums := map[string]uint32{}
	for _, prm := range params {
		t := inputs[prm.Name]
		b := leBytes(t)
		payloads = append(payloads, b)
		sums[prm.Name] = crc32.ChecksumIEEE(b)
		shape := append([]int{}, t.Shape...) // a scalar's is [], not null
		msg.Tensors = append(msg.Tensors, wireTensor{Name: prm.Name, DType: t.DType.String(), Shape: shape, NBytes: int64(len(b))})
	}
	want := map[string]wantTensor{}
	for _, r := range pf.Results {
		want[r.Name] = wantTensor{dtype: r.Type.DType.String(), shape: ir.Concrete(r.Type.Shape, env)}
	}
	err = p.e.call(ctx, callName(ctx, fn), func(ctx context.Context, proc *extProc) error {
		proc.nextID++
		msg.ID = proc.nextID
		what := "the result of " + fn
		m, err := proc.exchange(ctx, p.e.opts.Timeout, what, want, func(w *bufio.Writer) error { return writeFrame(w, msg, payloads...) })
		if err == nil {
			err = checkAnswer(proc, m, msg.ID, what, msgResult)
		}
		if err == nil && m.Type == msgResult {
			err = checkSums(proc, fn, params, m, sums)
		}
		if err != nil {
			p.e.drop(proc)
			return err
		}
		if m.Type == msgError {
			return remoteError(name, fn, m)
		}
		out.Outputs, err = checkOutputs(name, pf, env, m)
		if m.unread {
			p.e.drop(proc) // the payloads it announced were not read
		}
		return err
	}, p.id)
	return out, err
}

// checkSums compares the executor's input checksums with the sent bytes'.
// A missing checksum is a protocol violation, a different one a modified
// input.
func checkSums(proc *extProc, fn string, params []ir.ParamSpec, m *inMsg, sums map[string]uint32) error {
	var modified []string
	for _, prm := range params {
		got, ok := m.InputCRC32[prm.Name]
		if !ok {
			return fmt.Errorf("%w: %s: the result of %s has no input_crc32 for input %s", ErrProtocol, proc.name, fn, prm.Name)
		}
		if got != sums[prm.Name] {
			modified = append(modified, fmt.Sprintf("input %s (CRC-32 %08x sent, %08x after the call)", prm.Name, sums[prm.Name], got))
		}
	}
	if len(modified) > 0 {
		return &externalFailure{kind: ErrInputModified, text: fmt.Sprintf("%s modified %s during %s", proc.name, strings.Join(modified, " and "), fn)}
	}
	return nil
}

// checkOutputs turns a result's tensors into outputs, checking names,
// dtypes and shapes against the function's results.
func checkOutputs(name string, pf *program.Func, env map[string]int64, m *inMsg) (map[string]*tensor.Tensor, error) {
	outs := map[string]*tensor.Tensor{}
	var problems []string
	got := map[string]int{}
	for i, t := range m.Tensors {
		got[t.Name] = i
	}
	for i, t := range m.Tensors {
		if got[t.Name] != i {
			problems = append(problems, fmt.Sprintf("output %s is sent twice", t.Name))
		}
	}
	for _, r := range pf.Results {
		want := ir.Concrete(r.Type.Shape, env)
		// wantType is only for a problem's text: a result that is right
		// (every one, almost always) costs no formatting.
		wantType := func() string {
			s := fmt.Sprintf("%s %v", r.Type.DType, want)
			if hasSym(r.Type) {
				s += fmt.Sprintf(" (%s with %s)", r.Type, bindings(r.Type, env))
			}
			return s
		}
		i, ok := got[r.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("no output %s (want %s)", r.Name, wantType()))
			continue
		}
		wt, t := m.Tensors[i], m.decoded[i]
		if wt.DType != r.Type.DType.String() || !slices.Equal(wt.Shape, want) {
			problems = append(problems, fmt.Sprintf("output %s is %s %s, want %s", r.Name, wt.DType, shapeText(wt.Shape), wantType()))
			continue
		}
		outs[r.Name] = t
	}
	for _, t := range m.Tensors {
		if !slices.ContainsFunc(pf.Results, func(v *program.Var) bool { return v.Name == t.Name }) {
			problems = append(problems, fmt.Sprintf("output %s is not a result of %s", t.Name, pf.Name))
		}
	}
	if len(problems) > 0 {
		return nil, &externalFailure{kind: ErrOutput, text: fmt.Sprintf("%s returned wrong outputs for %s: %s", name, pf.Name, strings.Join(problems, "; "))}
	}
	return outs, nil
}

func hasSym(t ir.Type) bool {
	return slices.ContainsFunc(t.Shape, func(d ir.Dim) bool { return d.IsSym() })
}

func bindings(t ir.Type, env map[string]int64) string {
	var parts []string
	for _, d := range t.Shape {
		if d.IsSym() {
			s := fmt.Sprintf("%s=%d", d.Sym, env[d.Sym])
			if !slices.Contains(parts, s) {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, ", ")
}

// remoteError rebuilds an executor's error message: a known kind with the
// text "FUNC: DETAIL" becomes the *ir.RuntimeError every executor returns;
// anything else keeps its text and, when known, its kind.
func remoteError(name, fn string, m *inMsg) error {
	var kind error
	for _, k := range ir.ErrorKinds() {
		if k.Error() == m.Kind {
			kind = k
		}
	}
	if detail, ok := strings.CutPrefix(m.Message, fn+": "); ok && kind != nil {
		return &ir.RuntimeError{Kind: kind, Func: fn, Detail: detail}
	}
	text := m.Message
	if text == "" {
		text = fmt.Sprintf("%s failed in %s without a message (kind %q)", name, fn, m.Kind)
	}
	return &externalFailure{kind: kind, text: text}
}

// externalFailure is an error with an exact text (compared by
// compare.Errors) that unwraps to its kind, when it has one.
type externalFailure struct {
	kind error
	text string
}

func (e *externalFailure) Error() string { return e.text }
func (e *externalFailure) Unwrap() error { return e.kind }

// Close releases the program in the executor (its process keeps serving
// the executor's other programs). Closing twice is a no-op.
func (p *prepared) Close() error {
	p.closed.Do(func() {
		p.e.forget(p.id)
		turn, ok := p.e.gate.TryEnter("releasing " + p.file.Name)
		if !ok {
			return // a call is running (an abandoned one): nothing to tidy now
		}
		defer turn.Leave()
		p.e.mu.Lock()
		proc := p.e.proc
		p.e.mu.Unlock()
		if proc == nil || !proc.Alive() {
			return
		}
		if _, ok := proc.prepared[p.id]; ok {
			delete(proc.prepared, p.id)
			if err := writeFrame(proc.bw, releaseMsg{Type: msgRelease, Program: p.id}); err != nil {
				p.e.drop(proc)
			}
		}
	})
	return nil
}

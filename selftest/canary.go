package selftest

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// The canaries' programs, one file per area of the judgement.
//
//go:embed canaries/*.rx
var canaryFS embed.FS

// ErrCanaryMissed is wrapped by RunCanaries' error when a canary was not
// flagged: the rule it stands for did not fail where it must.
var ErrCanaryMissed = errors.New("a rule of the judgement let its canary pass")

// ErrCanaryBroken is wrapped by RunCanaries' error when a canary could not
// be judged: its program failed, or its control (the same case unbroken)
// did not pass, so its verdict would prove nothing.
var ErrCanaryBroken = errors.New("a canary could not be judged")

// ErrNoCanary is wrapped by RunCanaries' error when a rule of the registry
// has no canary, or a canary names a rule the registry lacks.
var ErrNoCanary = errors.New("a rule of the judgement has no canary")

// Judgement is the judgement the canaries are held against: the functions
// rxeq judges with (DefaultJudgement). A test may replace one with a
// deliberately weakened version to show that a canary then fails; rxeq
// itself never does.
type Judgement struct {
	// Tolerances gives each float result its tolerance
	// (compare.Tolerances).
	Tolerances func(f *program.File, fn *program.Func, def compare.Tolerance) map[string]compare.Tolerance
	// Outputs compares every result (compare.Outputs).
	Outputs func(fn *program.Func, want, got map[string]*tensor.Tensor, tols map[string]compare.Tolerance, classes map[string]compare.ClassSource) ([]compare.OutputMetrics, []string)
	// Errors compares an executor's error with the oracle's
	// (compare.Errors).
	Errors func(want, got error) (bool, string)
	// Blame decides a failed case's blame (harness.BlameOutputs).
	Blame func(fn *program.Func, metrics []compare.OutputMetrics, want, got, rounded map[string]*tensor.Tensor, tols map[string]compare.Tolerance) harness.Blame
	// Lock checks one function's source lock (lock.Check).
	Lock func(csrc []byte, cfunc string, locks []program.Lock) lock.Result
	// Invariance checks an executor against itself on rearranged rows
	// (harness.CheckInvariance).
	Invariance func(ctx context.Context, fn *ir.Func, inputs, base map[string]*tensor.Tensor, run harness.InvarianceRun) ([]harness.InvarianceViolation, error)
}

// DefaultJudgement returns rxeq's own judgement: the functions `rxeq run`,
// rxginkgo and the fuzzer judge with.
func DefaultJudgement() Judgement {
	return Judgement{
		Tolerances: compare.Tolerances,
		Outputs:    compare.Outputs,
		Errors:     compare.Errors,
		Blame:      harness.BlameOutputs,
		Lock:       lock.Check,
		Invariance: harness.CheckInvariance,
	}
}

// Canary is a case one rule of the judgement must flag.
type Canary struct {
	Rule string // the Rule.ID it stands for
	Name string // unique among the canaries
	What string // what it breaks, in one line
	run  func(ctx context.Context, e *canaryEnv) (flagged bool, report string, err error)
	// runner, when not nil, is the same break judged by `rxeq run`'s
	// runner (harness.Run): the canary is flagged only when both flag it.
	runner *runnerCase
	// byRunner: run is the runner's judgement alone (a rule of the
	// runner, like --max-ulp).
	byRunner bool
}

// CanaryVerdict is what became of one canary.
type CanaryVerdict string

// The canary verdicts.
const (
	Flagged CanaryVerdict = "flagged"
	Missed  CanaryVerdict = "MISSED"
	Broken  CanaryVerdict = "BROKEN"
)

// CanaryOutcome is one canary's result.
type CanaryOutcome struct {
	Canary  Canary
	Verdict CanaryVerdict
	// Report is the first line of what flagged it (the mismatch report,
	// the error comparison, the lock failure, the case's message), or
	// why it was missed or broken.
	Report string
	// Runner: `rxeq run`'s runner judged the same break too (a canary on
	// its file's own inputs), and flagged it.
	Runner bool
}

// CanaryOptions configure RunCanaries.
type CanaryOptions struct {
	// Judgement to hold the canaries against; nil: DefaultJudgement().
	Judgement *Judgement
	// Hostile is the command that starts the hostile executor, to which
	// RunCanaries appends "--misbehave KIND" (`rxeq selftest-executor`,
	// see ServeHostile). The external-executor canaries are broken
	// without it.
	Hostile []string
	// HostileEnv is added to the hostile executor's environment.
	HostileEnv []string
	// Rules and Canaries default to Rules() and Canaries().
	Rules    []Rule
	Canaries []Canary
}

// Uncovered returns the IDs of the rules no canary stands for, and of
// the canaries' rules that are not in rules, each in order.
func Uncovered(rules []Rule, canaries []Canary) (noCanary, unknown []string) {
	ids := map[string]bool{}
	for _, r := range rules {
		ids[r.ID] = true
	}
	covered := map[string]bool{}
	for _, c := range canaries {
		covered[c.Rule] = true
		if !ids[c.Rule] && !slices.Contains(unknown, c.Rule) {
			unknown = append(unknown, c.Rule)
		}
	}
	for _, r := range rules {
		if !covered[r.ID] {
			noCanary = append(noCanary, r.ID)
		}
	}
	return noCanary, unknown
}

// RunCanaries runs every canary against the judgement and returns their
// outcomes in order. The error wraps ErrNoCanary when a rule has no canary
// (nothing is run), ErrCanaryMissed when a canary was not flagged, and
// ErrCanaryBroken when one could not be judged; it names each rule and
// canary.
func RunCanaries(ctx context.Context, opts CanaryOptions) ([]CanaryOutcome, error) {
	rules, canaries := opts.Rules, opts.Canaries
	if rules == nil {
		rules = Rules()
	}
	if canaries == nil {
		canaries = Canaries()
	}
	if none, unknown := Uncovered(rules, canaries); len(none)+len(unknown) > 0 {
		var parts []string
		if len(none) > 0 {
			parts = append(parts, "no canary for rule "+strings.Join(none, ", "))
		}
		if len(unknown) > 0 {
			parts = append(parts, "canaries for rules not in the registry: "+strings.Join(unknown, ", "))
		}
		return nil, fmt.Errorf("%w: %s", ErrNoCanary, strings.Join(parts, "; "))
	}
	j := DefaultJudgement()
	if opts.Judgement != nil {
		j = *opts.Judgement
	}
	env := &canaryEnv{j: j, hostile: opts.Hostile, hostileEnv: opts.HostileEnv, files: map[string]*program.File{},
		canaries: canaries, runs: map[string]*runnerRun{}}
	outs := make([]CanaryOutcome, len(canaries))
	var missed, broken []string
	for i, c := range canaries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := CanaryOutcome{Canary: c}
		flagged, report, err := c.run(ctx, env)
		if err == nil && flagged && c.runner != nil {
			var ok bool
			var why string
			if ok, why, err = env.runnerFlags(ctx, c); err == nil && !ok {
				flagged, report = false, "the judgement flags it, but rxeq run's runner does not: "+why
			}
			o.Runner = ok
		}
		switch {
		case err != nil:
			o.Verdict, o.Report = Broken, err.Error()
			broken = append(broken, fmt.Sprintf("rule %s: canary %s: %v", c.Rule, c.Name, err))
		case flagged:
			o.Verdict = Flagged
		default:
			o.Verdict = Missed
			missed = append(missed, fmt.Sprintf("rule %s: canary %s was not flagged (%s)", c.Rule, c.Name, firstLine(report)))
		}
		if o.Report == "" {
			o.Report = firstLine(report)
		}
		o.Runner = o.Runner || c.byRunner && o.Verdict == Flagged
		outs[i] = o
	}
	var errs []error
	if len(missed) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s", ErrCanaryMissed, strings.Join(missed, "; ")))
	}
	if len(broken) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s", ErrCanaryBroken, strings.Join(broken, "; ")))
	}
	return outs, errors.Join(errs...)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// canaryEnv is what the canaries of one RunCanaries share: the judgement,
// the parsed programs, the oracle, and the external canaries' one run.
type canaryEnv struct {
	j          Judgement
	hostile    []string
	hostileEnv []string

	mu    sync.Mutex
	files map[string]*program.File
	ref   executor.Executor

	extOnce  sync.Once
	extCases map[string]harness.Case
	extErr   error

	// canaries are those RunCanaries runs; runs the runner's cases of
	// each canary file, by file name.
	canaries []Canary
	runs     map[string]*runnerRun
}

// file returns the parsed canary program canaries/NAME.
func (e *canaryEnv) file(name string) (*program.File, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.files[name]; ok {
		return f, nil
	}
	src, err := canaryFS.ReadFile("canaries/" + name)
	if err != nil {
		return nil, err
	}
	f, err := program.ParseScenario("selftest/canaries/"+name, src)
	if err != nil {
		return nil, err
	}
	e.files[name] = f
	return f, nil
}

// oracle returns the reference executor, from the registry.
func (e *canaryEnv) oracle() (executor.Executor, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ref == nil {
		sel, err := builtin.Select([]executor.Name{executor.Oracle}, builtin.Config{}, nil)
		if err != nil {
			return nil, err
		}
		e.ref = sel.Reference
	}
	return e.ref, nil
}

// group is one function's inputs and the oracle's answer for them.
type group struct {
	f      *program.File
	fn     *program.Func
	inputs map[string]*tensor.Tensor
	want   map[string]*tensor.Tensor
	err    error
}

// run evaluates function fn of canaries/file through the oracle, on the
// file's generated inputs at its first batch with the params in set
// replaced.
func (e *canaryEnv) run(ctx context.Context, file, fn string, set map[string]*tensor.Tensor) (*group, error) {
	f, err := e.file(file)
	if err != nil {
		return nil, err
	}
	g := &group{f: f, fn: f.Func(fn)}
	if g.fn == nil {
		return nil, fmt.Errorf("canaries/%s has no function %s", file, fn)
	}
	batch := 1
	if len(f.Batches) > 0 {
		batch = f.Batches[0]
	}
	if g.inputs, err = harness.GenerateInputs(f, g.fn, batch, f.Seed, nil); err != nil {
		return nil, err
	}
	for k, v := range set {
		g.inputs[k] = v
	}
	ref, err := e.oracle()
	if err != nil {
		return nil, err
	}
	p, err := ref.Prepare(ctx, f, nil)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out, err := p.Run(ctx, fn, g.inputs)
	g.want, g.err = out.Outputs, err
	return g, nil
}

// float32Of is what a correct float32 executor returns for the oracle's
// outputs: every float rounded once to float32, int64 as it is.
func float32Of(want map[string]*tensor.Tensor) map[string]*tensor.Tensor {
	got := map[string]*tensor.Tensor{}
	for k, t := range want {
		if t.DType == tensor.Int64 {
			got[k] = t.Clone()
			continue
		}
		v := t.Float64s()
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		got[k] = tensor.FromFloat32(f, slices.Clone(t.Shape)...)
	}
	return got
}

// outputCanary breaks one output of the oracle's float32-rounded answer.
type outputCanary struct {
	file, fn string
	set      map[string]*tensor.Tensor // inputs given by hand
	output   string                    // the output that must be flagged ("" with undeclared)
	// undeclared: the break adds an output; the flag is Outputs'
	// list of undeclared outputs.
	undeclared bool
	edit       func(got map[string]*tensor.Tensor)
}

// judge compares got with the group's oracle answer through the
// judgement.
func (e *canaryEnv) judge(g *group, got map[string]*tensor.Tensor) ([]compare.OutputMetrics, []string, map[string]compare.Tolerance) {
	def := compare.DefaultTolerance()
	tols := e.j.Tolerances(g.f, g.fn, def)
	ms, extra := e.j.Outputs(g.fn, g.want, got, tols, compare.ClassSources(g.fn))
	return ms, extra, tols
}

// control checks that the unbroken answer passes, so that the canary's
// flag comes from its break alone.
func (e *canaryEnv) control(g *group) error {
	if g.err != nil {
		return fmt.Errorf("the oracle failed on the canary's program: %w", g.err)
	}
	ms, extra, _ := e.judge(g, float32Of(g.want))
	for _, m := range ms {
		if !m.OK {
			return fmt.Errorf("control: the unbroken answer does not pass: %s", m.Report)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("control: %s", compare.Undeclared(extra))
	}
	return nil
}

// broken runs the canary's break and returns the metrics of the broken
// answer, after checking that only the canary's output failed.
func (e *canaryEnv) broken(ctx context.Context, c outputCanary) (*group, map[string]*tensor.Tensor, []compare.OutputMetrics, []string, map[string]compare.Tolerance, error) {
	g, err := e.run(ctx, c.file, c.fn, c.set)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	if err := e.control(g); err != nil {
		return nil, nil, nil, nil, nil, err
	}
	got := float32Of(g.want)
	c.edit(got)
	ms, extra, tols := e.judge(g, got)
	for _, m := range ms {
		if m.Name != c.output && !m.OK {
			return nil, nil, nil, nil, nil, fmt.Errorf("the break reached another output than %q: %s", c.output, m.Report)
		}
	}
	return g, got, ms, extra, tols, nil
}

func (c outputCanary) run(ctx context.Context, e *canaryEnv) (bool, string, error) {
	_, _, ms, extra, _, err := e.broken(ctx, c)
	if err != nil {
		return false, "", err
	}
	if c.undeclared {
		if len(extra) > 0 {
			return true, compare.Undeclared(extra), nil
		}
		return false, "no undeclared output reported", nil
	}
	for _, m := range ms {
		if m.Name == c.output {
			return !m.OK, m.Report, nil
		}
	}
	return false, "", fmt.Errorf("no comparison of output %q", c.output)
}

// blameCanary is an outputCanary whose broken answer mismatches and must
// be blamed on the executor, never on float32.
type blameCanary struct{ outputCanary }

func (c blameCanary) run(ctx context.Context, e *canaryEnv) (bool, string, error) {
	g, got, ms, _, tols, err := e.broken(ctx, c.outputCanary)
	if err != nil {
		return false, "", err
	}
	var report string
	for _, m := range ms {
		if m.Name == c.output && m.OK {
			return false, "", fmt.Errorf("the broken output %s is not a mismatch, so there is nothing to blame", c.output)
		} else if m.Name == c.output {
			report = m.Report
		}
	}
	rd, ok := e.ref.(executor.Rounder)
	if !ok {
		return false, "", fmt.Errorf("the reference %s has no float32-rounded mode", e.ref.Name())
	}
	rounded, err := rd.RunRounded(ctx, g.fn, g.inputs)
	if err != nil {
		return false, "", fmt.Errorf("the float32-rounded reference failed: %w", err)
	}
	b := e.j.Blame(g.fn, ms, g.want, got, rounded, tols)
	return b == harness.BlameExecutor, fmt.Sprintf("blame %s: %s", b, report), nil
}

// errorCanary replaces the oracle's error (or success) with another.
type errorCanary struct {
	set  map[string]*tensor.Tensor
	fail bool // the oracle must fail on these inputs
	mk   func(want error) error
}

func (c errorCanary) run(ctx context.Context, e *canaryEnv) (bool, string, error) {
	g, err := e.run(ctx, "errors.rx", "rem", c.set)
	if err != nil {
		return false, "", err
	}
	if (g.err != nil) != c.fail {
		return false, "", fmt.Errorf("the oracle's error is %v, want a failure: %v", g.err, c.fail)
	}
	if ok, msg := e.j.Errors(g.err, g.err); !ok {
		return false, "", fmt.Errorf("control: the oracle's own error does not match itself: %s", msg)
	}
	ok, msg := e.j.Errors(g.err, c.mk(g.err))
	return !ok, msg, nil
}

// lockCanary checks a function of canaries/lock.rx whose lock must fail;
// looper's lock is the control that must hold.
type lockCanary struct{ fn string }

func (c lockCanary) run(_ context.Context, e *canaryEnv) (bool, string, error) {
	f, err := e.file("lock.rx")
	if err != nil {
		return false, "", err
	}
	p, err := program.Lower(f)
	if err != nil {
		return false, "", err
	}
	src, err := native.Generate(p)
	if err != nil {
		return false, "", err
	}
	if res := e.j.Lock(src, native.CFuncName("looper"), f.Func("looper").Locks); !res.OK {
		return false, "", fmt.Errorf("control: looper's lock does not hold: %s", res.Message)
	}
	fn := f.Func(c.fn)
	if fn == nil || len(fn.Locks) == 0 {
		return false, "", fmt.Errorf("canaries/lock.rx has no locked function %s", c.fn)
	}
	res := e.j.Lock(src, native.CFuncName(c.fn), fn.Locks)
	if res.OK {
		return false, "the lock held", nil
	}
	return true, res.Message, nil
}

// externalCanary runs canaries/external.rx through the hostile executor
// misbehaving as kind: the case must fail with every text of want in its
// message (the check that must catch it, not a later comparison).
type externalCanary struct {
	kind string
	want []string
}

// hostileKinds returns the misbehaviours the external canaries run, the
// control ("ok") first.
func hostileKinds() []string {
	return []string{"ok", "nocrc", "wrongcrc", "mutate", "dims", "dtype", "protocol"}
}

func hostileName(kind string) executor.Name { return executor.Name("hostile-" + kind) }

// external runs canaries/external.rx once through the hostile executor in
// every misbehaviour, and returns each one's case.
func (e *canaryEnv) external(ctx context.Context) (map[string]harness.Case, error) {
	e.extOnce.Do(func() {
		if len(e.hostile) == 0 {
			e.extErr = errors.New("no command for the hostile executor (rxeq selftest-executor)")
			return
		}
		f, err := e.file("external.rx")
		if err != nil {
			e.extErr = err
			return
		}
		var execs []executor.Executor
		var names []executor.Name
		for _, k := range hostileKinds() {
			x, err := external.New(external.Options{Name: string(hostileName(k)), Command: append(slices.Clone(e.hostile), "--misbehave", k),
				Env: e.hostileEnv, Timeout: time.Minute})
			if err != nil {
				e.extErr = err
				return
			}
			defer x.Close()
			execs = append(execs, x)
			names = append(names, x.Name())
		}
		res, err := harness.Run(ctx, []*program.File{f}, harness.Options{Executors: execs, Backends: names, SkipLocks: true, Parallel: 1})
		if res == nil {
			e.extErr = err
			return
		}
		e.extCases = map[string]harness.Case{}
		for _, c := range res.Cases {
			e.extCases[string(c.Executor)] = c
		}
	})
	return e.extCases, e.extErr
}

func (c externalCanary) run(ctx context.Context, e *canaryEnv) (bool, string, error) {
	cases, err := e.external(ctx)
	if err != nil {
		return false, "", err
	}
	ctl, ok := cases[string(hostileName("ok"))]
	if !ok || ctl.Status != harness.StatusPass {
		return false, "", fmt.Errorf("control: the hostile executor behaving does not pass (%s): %s", ctl.Status, ctl.Message)
	}
	cs, ok := cases[string(hostileName(c.kind))]
	if !ok {
		return false, "", fmt.Errorf("no case for %s", hostileName(c.kind))
	}
	msg := cs.Message
	if cs.Status != harness.StatusFail {
		return false, statusText(cs.Status, msg), nil
	}
	for _, w := range c.want {
		if !strings.Contains(msg, w) {
			return false, fmt.Sprintf("failed, but not by this check (no %q): %s", w, msg), nil
		}
	}
	return true, msg, nil
}

// runnerCase is a canary's break as an executor gives it to `rxeq run`'s
// runner: function fn of canaries/file, on the file's own inputs.
type runnerCase struct {
	file, fn string
	// answer turns the oracle's answer into the broken one.
	answer func(want map[string]*tensor.Tensor, err error) (map[string]*tensor.Tensor, error)
	// blame: the case must also be blamed on the executor.
	blame bool
	// maxULP is the run's harness.Options.MaxULP (--max-ulp).
	maxULP int64
}

func (c outputCanary) runner() *runnerCase {
	if c.set != nil {
		return nil // inputs by hand: the runner generates its own
	}
	return &runnerCase{file: c.file, fn: c.fn, answer: func(want map[string]*tensor.Tensor, err error) (map[string]*tensor.Tensor, error) {
		got := float32Of(want)
		c.edit(got)
		return got, err
	}}
}

func (c blameCanary) runner() *runnerCase {
	r := c.outputCanary.runner()
	if r != nil {
		r.blame = true
	}
	return r
}

func (c errorCanary) runner() *runnerCase {
	if c.set != nil {
		return nil
	}
	return &runnerCase{file: "errors.rx", fn: "rem", answer: func(_ map[string]*tensor.Tensor, err error) (map[string]*tensor.Tensor, error) {
		return map[string]*tensor.Tensor{}, c.mk(err)
	}}
}

// runnerRun is one harness.Run of a canary file through an executor per
// canary of that file.
type runnerRun struct {
	once  sync.Once
	cases map[string][]harness.Case // by executor name
	err   error
}

// runnerName is the executor of canary name in the runner's run.
func runnerName(name string) executor.Name { return executor.Name("canary-" + name) }

// runnerFlags reports whether `rxeq run`'s runner fails canary c's case
// (and blames the executor, where c.runner.blame), with why not.
func (e *canaryEnv) runnerFlags(ctx context.Context, c Canary) (bool, string, error) {
	key := fmt.Sprintf("%s --max-ulp %d", c.runner.file, c.runner.maxULP)
	e.mu.Lock()
	r := e.runs[key]
	if r == nil {
		r = &runnerRun{}
		e.runs[key] = r
	}
	e.mu.Unlock()
	r.once.Do(func() { r.cases, r.err = e.runFile(ctx, c.runner.file, c.runner.maxULP) })
	if r.err != nil {
		return false, "", r.err
	}
	for _, cs := range r.cases[string(runnerName(controlName))] {
		if cs.Status != harness.StatusPass {
			return false, "", fmt.Errorf("control: the runner does not pass the unbroken answer for %s (%s): %s", cs.Function, cs.Status, firstLine(cs.Message))
		}
	}
	var mine *harness.Case
	for i, cs := range r.cases[string(runnerName(c.Name))] {
		if cs.Function == c.runner.fn {
			mine = &r.cases[string(runnerName(c.Name))][i]
		} else if cs.Status != harness.StatusPass {
			return false, "", fmt.Errorf("control: the runner does not pass function %s, which the canary leaves unbroken (%s): %s", cs.Function, cs.Status, firstLine(cs.Message))
		}
	}
	switch {
	case mine == nil:
		return false, "", fmt.Errorf("the runner has no case of %s for %s", c.runner.fn, runnerName(c.Name))
	case mine.Status != harness.StatusFail:
		return false, statusText(mine.Status, mine.Message), nil
	case c.runner.blame && mine.Blame != harness.BlameExecutor:
		return false, fmt.Sprintf("blame %q: %s", mine.Blame, firstLine(mine.Message)), nil
	}
	return true, firstLine(mine.Message), nil
}

// controlName is the runner's executor that breaks nothing: each canary
// file's run holds it, and it must pass.
const controlName = "control"

// runFile runs canaries/file through harness.Run with one executor per
// canary of that file, each returning its break for its function and the
// oracle's answer rounded to float32 for the others.
func (e *canaryEnv) runFile(ctx context.Context, file string, maxULP int64) (map[string][]harness.Case, error) {
	f, err := e.file(file)
	if err != nil {
		return nil, err
	}
	ref, err := e.oracle()
	if err != nil {
		return nil, err
	}
	control := &runnerExecutor{name: runnerName(controlName), ref: ref, rc: &runnerCase{}}
	execs := []executor.Executor{control}
	names := []executor.Name{control.name}
	for _, c := range e.canaries {
		if c.runner != nil && c.runner.file == file && c.runner.maxULP == maxULP {
			x := &runnerExecutor{name: runnerName(c.Name), ref: ref, rc: c.runner}
			execs = append(execs, x)
			names = append(names, x.name)
		}
	}
	res, err := harness.Run(ctx, []*program.File{f}, harness.Options{Executors: execs, Backends: names, SkipLocks: true, Parallel: 1, MaxULP: maxULP})
	if res == nil {
		return nil, err
	}
	cases := map[string][]harness.Case{}
	for _, c := range res.Cases {
		cases[string(c.Executor)] = append(cases[string(c.Executor)], c)
	}
	return cases, nil
}

// runnerExecutor is a canary as an executor: the oracle's answer, rounded
// to float32, broken in function rc.fn.
type runnerExecutor struct {
	name executor.Name
	ref  executor.Executor
	rc   *runnerCase
}

func (x *runnerExecutor) Name() executor.Name { return x.name }

func (x *runnerExecutor) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := x.ref.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	return &runnerPrepared{x: x, inner: inner}, nil
}

type runnerPrepared struct {
	x     *runnerExecutor
	inner executor.Prepared
}

func (p *runnerPrepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	// The oracle gets its own copy: the runner checks that the inputs it
	// gave are left as they were.
	out, err := p.inner.Run(ctx, fn, tensor.CloneMap(inputs))
	if ctx.Err() != nil {
		return out, err
	}
	if fn != p.x.rc.fn {
		if err != nil {
			return executor.Outcome{Path: p.x.name}, err
		}
		return executor.Outcome{Path: p.x.name, Outputs: float32Of(out.Outputs)}, nil
	}
	got, gerr := p.x.rc.answer(out.Outputs, err)
	return executor.Outcome{Path: p.x.name, Outputs: got}, gerr
}

func (p *runnerPrepared) Close() error { return p.inner.Close() }

// invarianceCanary runs function values of canaries/values.rx as an
// executor whose result for a row changes when the row is computed alone
// (at batch 1): perturb breaks that run's outputs.
type invarianceCanary struct {
	perturb func(got map[string]*tensor.Tensor)
}

func (c invarianceCanary) run(ctx context.Context, e *canaryEnv) (bool, string, error) {
	g, err := e.run(ctx, "values.rx", "values", nil)
	if err != nil {
		return false, "", err
	}
	p, err := program.Lower(g.f)
	if err != nil {
		return false, "", err
	}
	fn := p.Func("values")
	ref, err := e.oracle()
	if err != nil {
		return false, "", err
	}
	pr, err := ref.Prepare(ctx, g.f, p)
	if err != nil {
		return false, "", err
	}
	defer pr.Close()
	run := func(broken bool) harness.InvarianceRun {
		return func(ctx context.Context, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			out, err := pr.Run(ctx, "values", inputs)
			if err != nil {
				return nil, err
			}
			got := float32Of(out.Outputs)
			if broken && inputs["x"].Shape[0] == 1 {
				c.perturb(got)
			}
			return got, nil
		}
	}
	base, err := run(false)(ctx, g.inputs)
	if err != nil {
		return false, "", err
	}
	if v, err := e.j.Invariance(ctx, fn, g.inputs, base, run(false)); err != nil || len(v) > 0 {
		return false, "", fmt.Errorf("control: the unbroken executor is not invariant: %v %v", v, err)
	}
	v, err := e.j.Invariance(ctx, fn, g.inputs, base, run(true))
	if err != nil {
		return false, "", err
	}
	if len(v) == 0 {
		return false, "no invariance violation", nil
	}
	return true, v[0].Detail, nil
}

// maxULPCanary is an outputCanary judged by `rxeq run --max-ulp N`'s
// runner alone: the bound is the runner's, given to every float output
// without its own ulp=, so no function of package compare states it.
type maxULPCanary struct {
	outputCanary
	name   string
	maxULP int64
}

func (c maxULPCanary) runner() *runnerCase {
	r := c.outputCanary.runner()
	r.maxULP = c.maxULP
	return r
}

func (c maxULPCanary) run(ctx context.Context, e *canaryEnv) (bool, string, error) {
	return e.runnerFlags(ctx, Canary{Name: c.name, runner: c.runner()})
}

// statusText is "status STATUS" and the first line of a case's message.
func statusText(st harness.Status, msg string) string {
	if msg = firstLine(msg); msg == "" {
		return fmt.Sprintf("status %s", st)
	}
	return fmt.Sprintf("status %s: %s", st, msg)
}

package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Run runs the matrix: every scenario × function × batch × executor.
//
// For each group (scenario, function, batch) the inputs are generated once
// (GenerateInputs), or read from Options.Inputs, and every executor gets
// its own copy of the same bytes.
// The reference (the oracle) runs first; every other executor's full
// outputs are then compared with it (compare.ToOracle with the output's
// tolerance, compare.ClassesOwn with the near-tie rule for int64 results that
// are the Argmax of a float result, exact otherwise), its float outputs
// are measured in ULPs against the ULPBase executor, and errors are
// compared with compare.Errors: when the oracle fails, the others must fail
// with the same kind and message. A scenario's //rx:expect-error text must
// be contained in the oracle's error; if it is not (or the oracle
// succeeds), every case of the group fails. The SHA-256 of every input is
// taken before each run and checked after it: a modified input fails the
// case.
//
// Before a group generates its inputs, EstimateMemory bounds what it needs
// through every executor that runs it. A group over Options.MaxMemory is
// not run: its cases are errors (ErrMemory) that say what it needs and how
// to raise the budget. Otherwise the estimate is reserved from the budget,
// which the groups running at once share, until the group is judged.
//
// Groups run in parallel, Options.Parallel at a time; each executor's run
// is bounded by Options.CaseTimeout (a run that ignores its context is
// abandoned, not waited for). A failing or erroring case never stops the
// others. Results come back in matrix order whatever the scheduling.
//
// Each program is prepared once per executor before its cases run. The
// source lock (lock.Check on native.Generate's C for every function with
// //rx:lock lines, scoped to native.CFuncName(fn)) runs unless
// Options.SkipLocks; under sharding a function's lock belongs to the shard
// of its first group.
//
// The error is non-nil only for unusable options (ErrOptions) or when ctx
// ends: the cases not run by then are reported with StatusError, and the
// error wraps ctx.Err().
func Run(ctx context.Context, files []*program.File, opts Options) (*Result, error) {
	start := time.Now()
	r, err := newRunner(files, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Shard: opts.Shard, Groups: r.allGroups, Unavailable: r.unavailable}
	r.prepareAll(ctx)
	r.runGroups(ctx)
	r.closeAll()
	res.Cases = r.flatten()
	res.Preparations = r.preparations()
	res.Replays = r.replays()
	if !opts.SkipLocks {
		res.Locks = r.locks()
	}
	res.Wall = time.Since(start)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("harness run interrupted: %w", err)
	}
	return res, nil
}

// runner is the state of one Run.
type runner struct {
	unavailable []executor.Unavailable // default executors left out (no libtorch)
	files       []*program.File
	progs       []*ir.Program
	lowerErrs   []error
	opts        Options
	ref         executor.Executor
	execs       []executor.Executor // ref first, then the compared executors
	report      []bool              // whether each of execs is reported as cases
	parallel    int
	timeout     time.Duration
	tol         compare.Tolerance
	groups      []group
	prepared    [][]*prep // [file][exec]
	memory      *memoryBudget
	progress    sync.Mutex
	done        int
	lockOwned   map[*program.Func]bool // functions whose first group is in this shard
	lockGroup   map[*program.Func]int  // the number of each function's first group
	allGroups   int                    // the number of groups of the whole run, every shard
}

type group struct {
	index  int // its number in the whole (unsharded) run's matrix order
	file   int
	fn     *program.Func
	batch  int
	replay *replaySet // the inputs read from Options.Inputs; nil: all generated
	cases  []Case     // filled by runGroup
	gen    time.Duration
}

type prep struct {
	p         executor.Prepared
	err       error
	dur       time.Duration
	abandoned atomic.Bool // a Run was left running at its timeout
	needed    bool
}

func newRunner(files []*program.File, opts Options) (*runner, error) {
	if err := opts.Shard.validate(); err != nil {
		return nil, err
	}
	r := &runner{files: files, opts: opts, ref: opts.Reference}
	if r.ref == nil {
		r.ref = builtin.Reference()
	}
	others := opts.Executors
	r.unavailable = opts.Unavailable
	if others == nil {
		sel, err := builtin.Select(nil, builtin.Config{}.FromEnv(os.Getenv), nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		others, r.unavailable = sel.Executors, sel.Unavailable
	}
	r.execs = append([]executor.Executor{r.ref}, others...)
	seen := map[executor.Name]bool{}
	for _, e := range r.execs {
		if e == nil {
			return nil, fmt.Errorf("%w: nil executor", ErrOptions)
		}
		if seen[e.Name()] {
			return nil, fmt.Errorf("%w: two executors named %q", ErrOptions, e.Name())
		}
		seen[e.Name()] = true
	}
	for _, b := range opts.Backends {
		if i := slices.IndexFunc(r.unavailable, func(u executor.Unavailable) bool { return u.Executor == b }); i >= 0 && !seen[b] {
			return nil, fmt.Errorf("%w: backend %s is unavailable: %s", ErrOptions, b, r.unavailable[i].Reason)
		}
		if !seen[b] {
			return nil, fmt.Errorf("%w: unknown backend %q (have %v)", ErrOptions, b, r.names())
		}
	}
	for _, e := range r.execs {
		r.report = append(r.report, len(opts.Backends) == 0 || slices.Contains(opts.Backends, e.Name()))
	}
	for i, b := range opts.Batches {
		if b <= 0 || b > MaxBatch {
			return nil, fmt.Errorf("%w: batch %d: want 1 to %d (the limit of //rx:batches)", ErrOptions, b, MaxBatch)
		}
		if slices.Contains(opts.Batches[:i], b) {
			// Two groups of one name: their cases, dumps and report
			// entries could not be told apart.
			return nil, fmt.Errorf("%w: batch %d is given twice", ErrOptions, b)
		}
	}
	limit := opts.MaxMemory
	if limit == 0 {
		limit = DefaultMaxMemory()
	}
	r.memory = newMemoryBudget(limit)
	r.parallel = opts.Parallel
	if r.parallel <= 0 {
		r.parallel = runtime.NumCPU()
	}
	r.timeout = opts.CaseTimeout
	if r.timeout == 0 {
		r.timeout = DefaultCaseTimeout
	}
	r.tol = compare.DefaultTolerance()
	if opts.Tolerance != nil {
		r.tol = *opts.Tolerance
	}
	if opts.MaxULP < 0 {
		return nil, fmt.Errorf("%w: MaxULP %d: want 0 (no bound) or more", ErrOptions, opts.MaxULP)
	}
	if opts.Inputs != "" {
		if st, err := os.Stat(opts.Inputs); err != nil || !st.IsDir() {
			return nil, inputErr(err, "%s: not a directory of .npy files", opts.Inputs)
		}
	}
	n := 0
	found := false
	var inputErrs []error // every function's unusable input files, not just the first
	r.lockOwned = map[*program.Func]bool{}
	r.lockGroup = map[*program.Func]int{}
	for fi, f := range files {
		if f == nil {
			return nil, fmt.Errorf("%w: scenario %d is nil", ErrOptions, fi)
		}
		p, err := program.Lower(f)
		r.progs = append(r.progs, p)
		r.lowerErrs = append(r.lowerErrs, err)
		r.prepared = append(r.prepared, make([]*prep, len(r.execs)))
		for _, fn := range f.Funcs {
			var sets []*replaySet
			if opts.Inputs != "" {
				if sets, err = loadReplays(opts.Inputs, f, fn, opts.Dims); err != nil {
					inputErrs = append(inputErrs, err)
					found = true // its error says what is wrong
					continue
				}
			}
			var gs []group
			var dataBatches []int
			for _, s := range sets {
				found = true
				if s.batch == 0 {
					for _, b := range r.batches(f) {
						gs = append(gs, group{file: fi, fn: fn, batch: b, replay: s})
					}
					continue
				}
				dataBatches = append(dataBatches, s.batch)
				if len(opts.Batches) == 0 || slices.Contains(opts.Batches, s.batch) {
					gs = append(gs, group{file: fi, fn: fn, batch: s.batch, replay: s})
				}
			}
			if len(sets) > 0 && len(gs) == 0 {
				return nil, fmt.Errorf("%w: %s of %s: the input files give batch %s; Batches %v selects none of them",
					ErrOptions, fn.Name, f.ScenarioName(), joinInts(dataBatches), opts.Batches)
			}
			if len(sets) == 0 {
				for _, b := range r.batches(f) {
					gs = append(gs, group{file: fi, fn: fn, batch: b})
				}
			}
			r.lockOwned[fn] = opts.Shard.has(n)
			r.lockGroup[fn] = n
			for _, g := range gs {
				g.index = n
				if opts.Shard.has(n) {
					r.groups = append(r.groups, g)
				}
				n++
			}
		}
	}
	r.allGroups = n
	if len(inputErrs) > 0 {
		return nil, errors.Join(inputErrs...)
	}
	if opts.Inputs != "" && !found {
		return nil, inputErr(nil, "%s: no .npy file for any parameter of the functions run; the files are looked up as %s",
			opts.Inputs, strings.Join(InputSearchPaths(opts.Inputs, "SCENARIO", "FUNCTION", "bN", "PARAM"), ", then "))
	}
	return r, nil
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// replays lists where each group's inputs came from (Options.Inputs).
func (r *runner) replays() []Replay {
	if r.opts.Inputs == "" {
		return nil
	}
	var out []Replay
	for _, g := range r.groups {
		rp := Replay{Scenario: r.files[g.file].ScenarioName(), Function: g.fn.Name, Batch: g.batch, Files: map[string]string{}}
		if g.replay == nil {
			for _, p := range g.fn.Params {
				rp.Generated = append(rp.Generated, p.Name)
			}
		} else {
			maps.Copy(rp.Files, g.replay.files)
			rp.Generated = slices.Clone(g.replay.generated)
		}
		out = append(out, rp)
	}
	return out
}

// dims returns the symbolic dimensions of group g: Options.Dims, and those
// its input files bind.
func (r *runner) dims(g *group) map[string]int {
	if g.replay == nil {
		return r.opts.Dims
	}
	return g.replay.dims
}

// inputs reads or generates the inputs of group g, and says which file
// each read input came from.
func (r *runner) inputs(g *group) (map[string]*tensor.Tensor, map[string]string, error) {
	f := r.files[g.file]
	if g.replay == nil {
		in, err := GenerateInputs(f, g.fn, g.batch, r.seed(f), r.opts.Dims)
		return in, nil, err
	}
	read, err := g.replay.read()
	if err != nil {
		return nil, nil, err
	}
	in, err := generateInputs(f, g.fn, g.batch, r.seed(f), g.replay.dims, read)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(in, read)
	return in, g.replay.files, nil
}

func (r *runner) names() []executor.Name {
	var out []executor.Name
	for _, e := range r.execs {
		out = append(out, e.Name())
	}
	return out
}

func (r *runner) batches(f *program.File) []int {
	switch {
	case len(r.opts.Batches) > 0:
		return r.opts.Batches
	case len(f.Batches) > 0:
		return f.Batches
	}
	return []int{DefaultBatch}
}

func (r *runner) seed(f *program.File) uint64 {
	switch {
	case r.opts.Seed != nil:
		return *r.opts.Seed
	case f.HasSeed:
		return f.Seed
	}
	return DefaultScenarioSeed
}

// needed reports whether executor ei must run at all: the reference always,
// the others when their cases are reported (so with Backends = native only,
// no ULP metrics against the fallback are taken) or when a reported
// executor must equal their bits (executor.Twin: native for native-avx2).
func (r *runner) needed(ei int) bool {
	if ei == 0 || r.report[ei] {
		return true
	}
	for i, e := range r.execs {
		if r.report[i] && executor.TwinOf(e) == r.execs[ei].Name() {
			return true
		}
	}
	return false
}

// judgeTwin holds case c, the run of executor ei, against the run of the
// executor it must equal bit for bit (executor.Twin), when that one ran in
// the group too: any difference of outputs or errors fails the case, with
// a message naming both executors before what the oracle said.
func (r *runner) judgeTwin(c *Case, ei int, runs []*execRun) {
	twin := executor.TwinOf(r.execs[ei])
	ti := slices.IndexFunc(r.execs, func(e executor.Executor) bool { return e.Name() == twin })
	if twin == "" || ti <= 0 || runs[ti] == nil || !runs[ti].finished || runs[ei] == nil || errors.Is(runs[ti].err, executor.ErrUnserved) {
		return
	}
	c.Twin = twin
	run, tr := runs[ei], runs[ti]
	if ok, msg := compare.Bits(string(c.Executor), string(twin), tr.out.Outputs, tr.err, run.out.Outputs, run.err); !ok {
		c.Status = StatusFail
		c.Message = joinLines(msg, c.Message)
	}
}

// prepareAll prepares, for every scenario with a group in this run, every
// needed executor, Parallel at a time.
func (r *runner) prepareAll(ctx context.Context) {
	for _, g := range r.groups {
		for ei := range r.execs {
			if r.needed(ei) && r.prepared[g.file][ei] == nil {
				r.prepared[g.file][ei] = &prep{needed: true}
			}
		}
	}
	sem := make(chan struct{}, r.parallel)
	var wg sync.WaitGroup
	for fi := range r.files {
		for ei, p := range r.prepared[fi] {
			if p == nil {
				continue
			}
			if r.lowerErrs[fi] != nil {
				p.err = fmt.Errorf("lowering %s: %w", r.files[fi].Name, r.lowerErrs[fi])
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := ctx.Err(); err != nil {
					p.err = err
					return
				}
				t0 := time.Now()
				p.p, p.err = executor.SafePrepare(ctx, r.execs[ei], r.files[fi], r.progs[fi])
				p.dur = time.Since(t0)
			}()
		}
	}
	wg.Wait()
}

func (r *runner) runGroups(ctx context.Context) {
	sem := make(chan struct{}, r.parallel)
	var wg sync.WaitGroup
	for gi := range r.groups {
		g := &r.groups[gi]
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				g.cases = r.notRun(g, ctx.Err())
				r.tick(g)
				return
			}
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				g.cases = r.notRun(g, err)
			} else {
				r.runGroup(ctx, g)
			}
			r.tick(g)
		}()
	}
	wg.Wait()
}

func (r *runner) tick(g *group) {
	if r.opts.Progress == nil {
		return
	}
	r.progress.Lock()
	defer r.progress.Unlock()
	r.done++
	r.opts.Progress(r.done, len(r.groups), g.cases)
}

// baseCases returns the group's reported cases with their identity filled
// in; index i of the result is execs[idx[i]].
func (r *runner) baseCases(g *group) (cases []Case, idx []int) {
	f := r.files[g.file]
	for ei, e := range r.execs {
		if !r.report[ei] {
			continue
		}
		cases = append(cases, Case{Scenario: f.ScenarioName(), File: f.Name, Function: g.fn.Name, Batch: g.batch,
			Seed: r.seed(f), Executor: e.Name(), Group: g.index})
		idx = append(idx, ei)
	}
	return cases, idx
}

func (r *runner) notRun(g *group, err error) []Case {
	cases, _ := r.baseCases(g)
	for i := range cases {
		cases[i].Status = StatusError
		cases[i].Message = "not run: " + err.Error()
	}
	return cases
}

// refRun is the reference's run of one group.
type refRun struct {
	out executor.Outcome
	err error
}

// skipError is the outcome of a case that a //rx:skip line of its
// function leaves out: reported as skipped (it wraps
// executor.ErrUnserved), with the line and its reason.
type skipError struct{ skip program.Skip }

func (e skipError) Error() string {
	return fmt.Sprintf("skipped by //rx:skip at %s: %s", e.skip.Pos, e.skip.Reason)
}

func (skipError) Unwrap() error { return executor.ErrUnserved }

// execRun is one executor's run of one case.
type execRun struct {
	out      executor.Outcome
	err      error
	finished bool // Run returned (false on timeout or cancellation)
	dur      time.Duration
}

func (r *runner) runGroup(ctx context.Context, g *group) {
	f := r.files[g.file]
	cases, idx := r.baseCases(g)
	need, err := r.reserve(ctx, g)
	if err != nil {
		for i := range cases {
			cases[i].Status, cases[i].Message = StatusError, err.Error()
		}
		g.cases = cases
		return
	}
	defer r.memory.release(need)
	t0 := time.Now()
	inputs, sources, err := r.inputs(g)
	g.gen = time.Since(t0)
	if err != nil {
		for i := range cases {
			cases[i].Status, cases[i].Message = StatusError, err.Error()
			if g.replay == nil {
				cases[i].Message = "generating inputs: " + err.Error()
			}
		}
		g.cases = cases
		return
	}
	before := digests(inputs)
	// tolsFor is the tolerance of each float output for one executor:
	// //rx:tolerance … for=NAME first, then the directives for all.
	tolsFor := func(name executor.Name) map[string]compare.Tolerance {
		tols := compare.TolerancesFor(f, g.fn, r.tol, string(name))
		if n := r.opts.MaxULP; n > 0 {
			for name, t := range tols {
				if !t.UseULP {
					t.UseULP, t.ULP = true, n
					tols[name] = t
				}
			}
		}
		return tols
	}
	classes := compare.ClassSources(g.fn)

	runs := make([]*execRun, len(r.execs))
	for ei := range r.execs {
		if !r.needed(ei) {
			continue
		}
		p := r.prepared[g.file][ei]
		if p == nil || p.err != nil {
			continue
		}
		if sk, ok := g.fn.SkipFor(string(r.execs[ei].Name())); ok && ei != 0 {
			runs[ei] = &execRun{err: skipError{sk}, finished: true}
			continue
		}
		// Each executor its own copy of the inputs: the same bytes for
		// everyone, and a run that writes into its inputs cannot reach
		// the next executor's.
		in := tensor.CloneMap(inputs)
		name := Case{Scenario: f.ScenarioName(), Function: g.fn.Name, Batch: g.batch, Executor: r.execs[ei].Name()}.Name()
		run := r.exec(executor.WithCase(ctx, name), p, g.fn.Name, in)
		runs[ei] = &run
		runDigests, mutated := checkDigests(before, in, run.finished)
		for i := range runDigests {
			runDigests[i].Source = sources[runDigests[i].Name]
		}
		for i := range cases {
			if idx[i] == ei {
				cases[i].Inputs = runDigests
				if mutated != "" {
					cases[i].Message = mutated
				}
			}
		}
		if ei == 0 && !run.finished {
			break // no reference, nothing to compare with
		}
	}

	// What is wrong with the reference applies to every case of the group.
	refStatus, refMsg := r.judgeReference(f, r.prepared[g.file][0], runs[0])
	var ulpBase map[string]*tensor.Tensor
	for ei, e := range r.execs {
		if e.Name() == r.ulpBase() && runs[ei] != nil && runs[ei].finished && runs[ei].err == nil {
			ulpBase = runs[ei].out.Outputs
		}
	}
	var rounded map[string]*tensor.Tensor
	roundedDone := false
	for i := range cases {
		c := &cases[i]
		ei := idx[i]
		p := r.prepared[g.file][ei]
		run := runs[ei]
		mutated := c.Message
		c.Message = ""
		c.Path = r.execs[ei].Name()
		tols := tolsFor(r.execs[ei].Name())
		c.Tolerances = tols
		switch {
		case p == nil || p.err != nil:
			c.Status, c.Message = StatusError, fmt.Sprintf("%s could not prepare %s: %v", r.execs[ei].Name(), f.Name, perr(p))
			if p != nil && p.err != nil {
				c.Error = p.err.Error()
			}
			continue
		case run == nil:
			c.Status, c.Message = StatusError, "not run: the reference did not finish"
			continue
		}
		c.Timing.Execute = run.dur
		if run.out.Path != "" {
			c.Path = run.out.Path
		}
		if run.err != nil {
			c.Error = run.err.Error()
		}
		if !run.finished {
			c.Status, c.Message = StatusError, run.err.Error()
			continue
		}
		if ei != 0 && errors.Is(run.err, executor.ErrUnserved) {
			c.Status, c.Message, c.Error = StatusSkip, run.err.Error(), ""
			continue
		}
		tc := time.Now()
		if ei == 0 {
			c.Status = StatusPass
		} else if refStatus == "" {
			judge(c, g.fn, refRun{out: runs[0].out, err: runs[0].err}, run.out, run.err, tols, classes, r.opts.ErrorKinds)
			if rd, exact := r.ref.(executor.Rounder); exact && c.Status == StatusFail && run.err == nil && runs[0].err == nil && mutated == "" {
				if !roundedDone {
					rounded, roundedDone = roundedReference(ctx, rd, g.fn, inputs), true
				}
				c.Blame = BlameOutputs(g.fn, c.Outputs, runs[0].out.Outputs, run.out.Outputs, rounded, tols)
				if c.Blame == BlameFloat32 {
					c.Message = "float32 limit: a reference rounded to float32 at every op misses the same way\n" + c.Message
				}
			}
			if ulpBase != nil && run.err == nil && r.execs[ei].Name() != r.ulpBase() {
				c.ULP = compare.ULPs(g.fn, ulpBase, run.out.Outputs)
				for i := range c.ULP {
					c.ULP[i].Against = string(r.ulpBase())
				}
			}
		}
		if ei != 0 && refStatus == "" {
			r.judgeTwin(c, ei, runs)
		}
		if refStatus != "" {
			c.Status, c.Message = refStatus, refMsg
		}
		if mutated != "" {
			if c.Status == StatusPass {
				c.Status = StatusFail
			}
			c.Message = joinLines(c.Message, mutated)
		}
		c.Timing.Compare = time.Since(tc)
	}
	g.cases = cases
	if r.opts.Tensors != nil {
		gt := GroupTensors{Scenario: f.ScenarioName(), Function: g.fn.Name, Batch: g.batch, Inputs: inputs,
			Outputs: map[string]map[string]*tensor.Tensor{}, Errors: map[string]string{}}
		for ei, run := range runs {
			if run == nil || !run.finished {
				continue
			}
			if run.err != nil {
				gt.Errors[string(r.execs[ei].Name())] = run.err.Error()
			} else {
				gt.Outputs[string(r.execs[ei].Name())] = run.out.Outputs
			}
		}
		r.opts.Tensors(gt)
	}
}

// reserve estimates what group g needs through the executors that will run
// it (EstimateMemory), refuses a group over the whole budget (ErrMemory)
// and otherwise waits until the estimate fits beside the running groups'
// and reserves it; the caller releases the returned bytes.
func (r *runner) reserve(ctx context.Context, g *group) (uint64, error) {
	var execs []executor.Executor
	for ei, e := range r.execs {
		if p := r.prepared[g.file][ei]; r.needed(ei) && p != nil && p.err == nil {
			execs = append(execs, e)
		}
	}
	var lowered *ir.Func
	if p := r.progs[g.file]; p != nil {
		lowered = p.Func(g.fn.Name)
	}
	est := EstimateMemory(g.fn, lowered, g.batch, r.dims(g), execs)
	if err := CheckMemory(est, int64(min(r.memory.limit, math.MaxInt64))); err != nil {
		return 0, err
	}
	if err := r.memory.acquire(ctx, est.Total); err != nil {
		return 0, fmt.Errorf("not run: waiting for %s of the memory budget: %w", FormatBytes(est.Total), err)
	}
	return est.Total, nil
}

// judgeReference returns the status every case of a group takes because
// of the reference ("" when the reference is fine) and why.
func (r *runner) judgeReference(f *program.File, p *prep, run *execRun) (Status, string) {
	name := r.ref.Name()
	switch {
	case p == nil || p.err != nil:
		return StatusError, fmt.Sprintf("the reference (%s) could not prepare %s: %v", name, f.Name, perr(p))
	case run == nil:
		return StatusError, "the reference did not run"
	case !run.finished:
		return StatusError, fmt.Sprintf("the reference (%s) did not finish: %v", name, run.err)
	}
	if f.ExpectError != "" {
		if run.err == nil {
			return StatusFail, fmt.Sprintf("the scenario expects an error containing %q, but the reference (%s) succeeded", f.ExpectError, name)
		}
		if !strings.Contains(run.err.Error(), f.ExpectError) {
			return StatusFail, fmt.Sprintf("the scenario expects an error containing %q, but the reference (%s) failed with %q", f.ExpectError, name, run.err.Error())
		}
		return "", ""
	}
	if run.err != nil {
		var rt *ir.RuntimeError
		if errors.As(run.err, &rt) {
			return StatusError, fmt.Sprintf("the reference (%s) failed and the scenario has no //rx:expect-error: %v", name, run.err)
		}
		return StatusError, fmt.Sprintf("the reference (%s) failed: %v", name, run.err)
	}
	return "", ""
}

func perr(p *prep) error {
	if p == nil || p.err == nil {
		return errors.New("not prepared")
	}
	return p.err
}

func (r *runner) ulpBase() executor.Name {
	if r.opts.ULPBase != "" {
		return r.opts.ULPBase
	}
	return executor.Fallback
}

// exec runs one case on p with the case timeout, recovering panics. A Run
// that has not returned when the timeout (or ctx) ends is abandoned: it
// keeps its own copy of the inputs, and its Prepared is closed in the
// background once it returns.
//
// A Run that returns an error wrapping ErrNotRun never started the case
// (its worker was busy until the deadline): the case is not finished and
// keeps that error, rather than becoming a timeout. Such a Run is waiting,
// not computing, so it notices the end of its context at once; when the
// timeout fires, the runner waits up to notRunGrace for that answer before
// it abandons the Run and reports ErrTimeout.
//
// Before the clock starts, an executor.Readier brings its process up and
// the program prepared in it (executor.Ready): a restart after another
// case's crash or timeout is not this case's time. A start that fails
// leaves the case not run (ErrNotRun) with the start's error.
//
// A Run whose error wraps executor.ErrTimedOut (the executor's own
// timeout killed its process) is a timeout of the case (ErrTimeout), as
// when the case timeout abandons it, not an error to compare.
func (r *runner) exec(ctx context.Context, p *prep, fn string, inputs map[string]*tensor.Tensor) execRun {
	if err := ready(ctx, p.p, fn); err != nil {
		if ctx.Err() != nil {
			return execRun{err: fmt.Errorf("cancelled: %w", ctx.Err())}
		}
		if !errors.Is(err, executor.ErrNotRun) {
			err = fmt.Errorf("%w: %w", executor.ErrNotRun, err)
		}
		return execRun{err: err}
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if r.timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, r.timeout)
	}
	defer cancel()
	done := make(chan execRun, 1)
	t0 := time.Now()
	go func() {
		var run execRun
		defer func() {
			if v := recover(); v != nil {
				run = execRun{err: fmt.Errorf("%w: panic in Run(%s): %v", executor.ErrExecutor, fn, v)}
			}
			run.finished = true
			run.dur = time.Since(t0)
			done <- run
		}()
		run.out, run.err = p.p.Run(cctx, fn, inputs)
	}()
	select {
	case run := <-done:
		switch {
		case errors.Is(run.err, executor.ErrNotRun):
			run.finished = false
		case errors.Is(run.err, executor.ErrTimedOut) && !errors.Is(run.err, executor.ErrStart) && ctx.Err() == nil:
			run.finished = false
			run.err = fmt.Errorf("%w: %w", ErrTimeout, run.err)
		case run.err != nil && errors.Is(run.err, context.DeadlineExceeded) && ctx.Err() == nil:
			run.finished = false
			run.err = fmt.Errorf("%w after %s (%v)", ErrTimeout, r.timeout, run.err)
		case run.err != nil && ctx.Err() != nil:
			run.finished = false
		}
		return run
	case <-cctx.Done():
		var why error // what the Run said, if it returned within the grace
		select {
		case run := <-done:
			if errors.Is(run.err, executor.ErrNotRun) {
				run.finished = false
				return run
			}
			why = run.err
		case <-time.After(notRunGrace):
			p.abandoned.Store(true)
		}
		run := execRun{dur: time.Since(t0)}
		switch {
		case ctx.Err() != nil:
			run.err = fmt.Errorf("cancelled: %w", ctx.Err())
		case why != nil:
			run.err = fmt.Errorf("%w after %s (%v)", ErrTimeout, r.timeout, why)
		default:
			run.err = fmt.Errorf("%w after %s", ErrTimeout, r.timeout)
		}
		return run
	}
}

// ready calls executor.Ready on p, turning a panic into an error.
func ready(ctx context.Context, p executor.Prepared, fn string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: panic in Ready(%s): %v", executor.ErrExecutor, fn, v)
		}
	}()
	return executor.Ready(ctx, p, fn)
}

// notRunGrace is how long the runner waits, once a case's timeout fires,
// for its Run to say that it never started the case (ErrNotRun).
const notRunGrace = 500 * time.Millisecond

// closeAll closes every prepared program; one with an abandoned Run is
// closed in the background (a native Close waits for running calls).
func (r *runner) closeAll() {
	for fi := range r.prepared {
		for _, p := range r.prepared[fi] {
			if p == nil || p.p == nil {
				continue
			}
			if p.abandoned.Load() {
				go p.p.Close() //nolint:errcheck // nothing left to report it to
				continue
			}
			_ = p.p.Close()
		}
	}
}

// flatten returns the cases in matrix order and charges each preparation
// and input generation to the first case that used it.
func (r *runner) flatten() []Case {
	var out []Case
	charged := map[[2]int]bool{}
	for gi := range r.groups {
		g := &r.groups[gi]
		for i := range g.cases {
			c := g.cases[i]
			if i == 0 {
				c.Timing.Inputs = g.gen
			}
			ei := slices.Index(r.names(), c.Executor)
			key := [2]int{g.file, ei}
			if p := r.prepared[g.file][ei]; p != nil && !charged[key] {
				c.Timing.Prepare = p.dur
				charged[key] = true
			}
			out = append(out, c)
		}
	}
	return out
}

func (r *runner) preparations() []Preparation {
	var out []Preparation
	for fi, f := range r.files {
		for ei, p := range r.prepared[fi] {
			if p == nil {
				continue
			}
			pr := Preparation{Scenario: f.ScenarioName(), Executor: r.execs[ei].Name(), Duration: p.dur}
			if p.err != nil {
				pr.Error = p.err.Error()
			}
			if np, ok := p.p.(executor.Built); ok {
				info := np.Info()
				pr.Compiler, pr.Library, pr.Cached = info.Compiler, info.Library, info.Cached
			}
			pr.Framework = executor.FrameworkOf(p.p)
			out = append(out, pr)
		}
	}
	return out
}

// locks checks the source lock of every function with lock lines whose
// first group is in this run.
func (r *runner) locks() []LockCase {
	var out []LockCase
	first := r.lockOwned
	for fi, f := range r.files {
		var src []byte
		var genErr error
		generated := false
		for _, fn := range f.Funcs {
			if len(fn.Locks) == 0 || !first[fn] {
				continue
			}
			start := time.Now()
			if !generated {
				generated = true
				if r.lowerErrs[fi] != nil {
					genErr = r.lowerErrs[fi]
				} else {
					src, genErr = native.Generate(r.progs[fi])
				}
			}
			lc := LockCase{Scenario: f.ScenarioName(), File: f.Name, Function: fn.Name, Group: r.lockGroup[fn]}
			if genErr != nil {
				lc.Error = fmt.Sprintf("no C to check the lock of %s against: %v", fn.Name, genErr)
			} else {
				lc.Result = lock.Check(src, native.CFuncName(fn.Name), fn.Locks)
			}
			lc.Duration = time.Since(start)
			out = append(out, lc)
		}
	}
	return out
}

func joinLines(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

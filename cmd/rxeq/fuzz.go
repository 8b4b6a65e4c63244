package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
)

// fuzzRun is one `rxeq fuzz` session: the generator's settings, the
// checker and where findings go.
type fuzzRun struct {
	seed     uint64
	count    int           // programs to run; 0 with limit set means until limit
	limit    time.Duration // --time; 0 means no time bound
	cfg      fuzz.Config
	checker  *fuzz.Checker
	out      string        // --out
	execList string        // the --executors value, for the rerun command
	external executorSpecs // --executor NAME=COMMAND
	isolate  bool
	term     bool // progress on a terminal
	reducer  fuzz.Reducer
	timeout  time.Duration // --timeout; 0 when not given (tests)
	parallel int           // programs checked at once; 0 means 1
	// chunk and ownWorkers are for tests: programs a goroutine takes at
	// once (0: fuzzChunk), and a worker process per program instead of a
	// pool per goroutine (the behaviour batching must not change).
	chunk      int
	ownWorkers bool
	// slotCaches is the session's private build cache when each goroutine
	// may have a directory of its own in it, emptied after each chunk (the
	// runtime library lives elsewhere); "" otherwise.
	slotCaches string
}

// tolerance registers --rtol and --atol, the tolerance of float outputs
// without a //rx:tolerance directive.
func tolerance(fs *flagSet) *compare.Tolerance {
	t := fuzz.DefaultTolerance()
	fs.Float64Var(&t.RTol, "rtol", t.RTol, "relative tolerance of float outputs without //rx:tolerance")
	fs.Float64Var(&t.ATol, "atol", t.ATol, "absolute tolerance of float outputs without //rx:tolerance")
	return &t
}

// noiseRuns maps --noise-runs (0: none) to fuzz.Checker.NoiseRuns (0:
// the default, negative: none).
func noiseRuns(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}

// defaultFuzzTimeout bounds one isolated native run under fuzz and
// reduce: generated programs are small, so a run this long is a hang.
const defaultFuzzTimeout = 10 * time.Second

// fuzzStats is what a session found.
type fuzzStats struct {
	programs, findings int
	excused            int    // output elements within float32 rounding noise (fuzz.Report.Excused)
	firstFound         uint64 // seed of the first program with a finding
	elapsed            time.Duration
}

func cmdFuzz(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fuzz", "[flags]", stdout, stderr)
	var r fuzzRun
	fs.Uint64Var(&r.seed, "seed", 1, "seed of the first program (program i has seed N+i)")
	fs.IntVar(&r.count, "count", 0, "programs to run (default 100 without --time)")
	fs.DurationVar(&r.limit, "time", 0, "run until this much time has passed (with --count: whichever comes first)")
	fs.StringVar(&r.execList, "executors", defaultFuzzExecutors(), "comma-separated executors: oracle (the reference) and fallback, native, torch (needs libtorch), --executor names")
	fs.Var(&r.external, "executor", "define an external executor `NAME=COMMAND` speaking rxeq.executor/v1, to name in --executors (repeatable)")
	fs.StringVar(&r.out, "out", "rxeq-findings", "directory for the reproducers")
	fs.BoolVar(&r.isolate, "isolate", true, "run native code in a worker process (a crash fails that program, the run goes on)")
	fs.IntVar(&r.cfg.MaxFuncs, "max-funcs", 0, "most functions per program (default 3)")
	fs.IntVar(&r.cfg.MaxStmts, "max-stmts", 0, "most top-level statements per function (default 8)")
	fs.IntVar(&r.cfg.MaxDepth, "max-depth", 0, "most nested for/if levels (default 2; -1 for none)")
	fs.IntVar(&r.cfg.MaxExprDepth, "max-expr-depth", 0, "deepest expression (default 3)")
	features := fs.String("features", "", "the exact feature set of every program, e.g. tanh,matmul,for (default: each program draws its own)")
	exclude := fs.String("exclude", "", "features no program uses, e.g. softmax,exp")
	fs.DurationVar(&r.reducer.MaxTime, "reduce-time", time.Minute, "time budget for reducing one finding (0: none); a native candidate costs a C compile (tcc, several candidates at once: a few ms; cc: 0.1 s or more)")
	fs.IntVar(&r.reducer.MaxTests, "reduce-tests", 0, "most candidate programs tested while reducing one finding (0: no bound)")
	timeout := fs.Duration("timeout", defaultFuzzTimeout, "with --isolate, a native run taking longer is killed and reported as a finding")
	noise := fs.Int("noise-runs", fuzz.DefaultNoiseRuns, "oracle runs rounding to float32 that measure how far rounding can move an output that disagrees (0: none, plain tolerance)")
	emi := fs.Int("emi", 1, "equivalent variants of each agreeing program (a loop split, a loop of one trip, a branch that never runs) that every executor must compute bit for bit the same (0: none)")
	fs.IntVar(&r.parallel, "parallel", runtime.GOMAXPROCS(0), "programs checked at once")
	mem := maxMemory(fs)
	programCC := fs.String("program-cc", "auto", programCCUsage)
	tol := tolerance(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var ferr error
	if r.cfg.Features, ferr = fuzz.ParseFeatures(*features); ferr == nil {
		r.cfg.Exclude, ferr = fuzz.ParseFeatures(*exclude)
	}
	if ferr != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", ferr)
		return exitUsage
	}
	if fs.NArg() != 0 || r.count < 0 || r.limit < 0 || r.cfg.MaxFuncs < 0 || r.cfg.MaxStmts < 0 || r.cfg.MaxDepth < -1 || r.cfg.MaxExprDepth < 0 ||
		r.reducer.MaxTime < 0 || r.reducer.MaxTests < 0 || *timeout <= 0 || *noise < 0 || *emi < 0 || r.parallel < 1 || tol.RTol < 0 || tol.ATol < 0 {
		fs.Usage()
		return exitUsage
	}
	if r.count == 0 && r.limit == 0 {
		r.count = 100
	}
	cache, cleanup, err := fuzzCache()
	if err != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitFail
	}
	defer cleanup()
	rtCache := runtimeCache()
	checker, err := buildChecker(r.execList, nativeSetup{isolate: r.isolate, cacheDir: cache, timeout: *timeout, external: r.external,
		programCC: resolveProgramCC(*programCC), rtCache: rtCache})
	if err != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitUsage
	}
	if cache != "" && rtCache != "" {
		r.slotCaches = cache
	}
	defer executor.CloseAll(checker.Executors)
	checker.NoiseRuns = noiseRuns(*noise)
	checker.Tolerance = tol
	checker.MaxMemory = mem.resolve()
	checker.Metamorphic = *emi
	r.timeout = *timeout
	r.checker = checker
	r.term = isTerminal(stderr)
	st, err := r.loop(ctx, stdout, stderr)
	rate := 0.0
	if st.elapsed > 0 {
		rate = float64(st.programs) / st.elapsed.Seconds()
	}
	fmt.Fprintf(stdout, "%d programs, %d findings, %.1f programs/s; %d output elements excused as float32 rounding noise\n",
		st.programs, st.findings, rate, st.excused)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitFail
	}
	if st.findings > 0 || err != nil {
		return exitFail
	}
	return exitOK
}

// fuzzCache returns the native build cache of one fuzz or reduce
// session: $RXEQ_CACHE when it is set, otherwise a fresh private
// directory (mode 0700) that cleanup removes. Every generated program
// and every reduction candidate is a new C library, so a campaign in the
// user's cache would leave thousands of objects nobody reuses. The
// directory is made in native.ScratchDir (/dev/shm on Linux when code may
// be loaded from it, unless $TMPDIR is set), where a build's dozen file
// creations cost microseconds instead of milliseconds.
//
// The runtime library, which every session links against and reuses, is
// built in the user's cache all the same (runtimeCache), so that a session
// does not begin with a runtime build.
func fuzzCache() (dir string, cleanup func(), err error) {
	if os.Getenv("RXEQ_CACHE") != "" {
		return "", func() {}, nil
	}
	dir, err = os.MkdirTemp(native.ScratchDir(), "rxeq-fuzz-cache-")
	if err != nil {
		return "", nil, fmt.Errorf("creating a build cache for this session: %w", err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// runtimeCache is the runtime library's cache directory for a session
// whose programs go to a private cache: the user's ($RXEQ_RUNTIME_CACHE,
// $RXEQ_CACHE or os.UserCacheDir()/rxeq), or "" (the session's own) when
// there is none.
func runtimeCache() string {
	if d := os.Getenv("RXEQ_RUNTIME_CACHE"); d != "" {
		return d
	}
	d, err := native.DefaultCacheDir("")
	if err != nil {
		return ""
	}
	return d
}

// nativeSetup is how the native executor of a checker runs.
type nativeSetup struct {
	isolate   bool          // in a worker process
	cacheDir  string        // "" for $RXEQ_CACHE or the user's cache
	timeout   time.Duration // one isolated run; 0 for isolate.DefaultTimeout
	programCC string        // native.Options.ProgramCC; "" for $CC
	external  executorSpecs // executors --executors may name besides the built-in ones
	rtCache   string        // native.Options.RuntimeCacheDir; "" for cacheDir
}

const programCCUsage = "C compiler of each candidate program's own C (the runtime's float kernels are always built by $CC): " +
	"auto is $RXEQ_PROGRAM_CC, else tcc when installed (a compile in milliseconds), else $CC; empty is $CC"

// resolveProgramCC turns --program-cc into native.Options.ProgramCC: auto
// is $RXEQ_PROGRAM_CC when set, else tcc when it is on PATH, else "" ($CC).
// A program's C is control flow and runtime calls without float
// arithmetic, so its compiler changes how fast a candidate builds, not
// what it computes.
func resolveProgramCC(flag string) string {
	if flag != "auto" {
		return flag
	}
	if v := os.Getenv("RXEQ_PROGRAM_CC"); v != "" {
		return v
	}
	if _, err := exec.LookPath("tcc"); err == nil {
		return "tcc"
	}
	return ""
}

// buildChecker turns --executors into a checker: the oracle is always the
// reference; at least one other executor must be listed.
// defaultFuzzExecutors is the default of fuzz's and reduce's --executors:
// oracle, fallback and native, or oracle and fallback in an rxeq that
// cannot run native code (built without cgo), so that a plain `rxeq fuzz`
// works in every build.
func defaultFuzzExecutors() string {
	if native.Available() != nil {
		return "oracle,fallback"
	}
	return "oracle,fallback,native"
}

func buildChecker(list string, ns nativeSetup) (*fuzz.Checker, error) {
	cfg := builtin.Config{Isolate: ns.isolate, CacheDir: ns.cacheDir, CallTimeout: ns.timeout, ProgramCC: ns.programCC,
		RuntimeCacheDir: ns.rtCache}.FromEnv(os.Getenv)
	sel, err := builtin.Select(builtin.ParseNames(list), cfg, ns.external)
	if err != nil {
		return nil, err
	}
	if len(sel.Unavailable) > 0 {
		sel.Close()
		u := sel.Unavailable[0]
		return nil, fmt.Errorf("executor %s: %s", u.Executor, u.Reason)
	}
	if len(sel.Executors) == 0 {
		return nil, fmt.Errorf("--executors %q: name fallback, native or torch to compare with the oracle", list)
	}
	return &fuzz.Checker{Reference: sel.Reference, Executors: sel.Executors}, nil
}

// outcome is what one program of a session gave.
type outcome struct {
	i         int  // the program's index: its seed is r.seed + i
	checked   bool // the program checked and ran (else msg says why not)
	cancelled bool // ctx ended while it ran: it does not count
	rep       *fuzz.Report
	msg       string // the FOUND text, or why the program did not check
	err       error  // the finding could not be saved: the session stops
}

// loop generates, checks, reduces and saves until count programs ran,
// the time limit passed or ctx ended. Programs run on r.parallel
// goroutines (at least one); their results are taken in seed order, so
// the summary, the progress and the saved files do not depend on
// scheduling (with --time, how many programs finish does).
func (r *fuzzRun) loop(parent context.Context, stdout, stderr io.Writer) (fuzzStats, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	var mu sync.Mutex
	next := 0
	// take hands out the next chunk of program indices [lo, hi).
	take := func() (lo, hi int, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || (r.count > 0 && next >= r.count) || (r.limit > 0 && time.Since(start) >= r.limit) {
			return 0, 0, false
		}
		lo, hi = next, next+cmp.Or(r.chunk, fuzzChunk)
		if r.count > 0 {
			hi = min(hi, r.count)
		}
		next = hi
		return lo, hi, true
	}
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range max(r.parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// In a session's private cache, this goroutine's isolated
			// builds go to a directory of its own, emptied after each
			// chunk: nothing builds there between chunks (its worker is
			// idle), loaded libraries stay mapped, and a long --time run
			// does not fill the tmpfs at some 80 KB per program.
			c, release, wipe := r.checker, func() {}, func() {}
			if !r.ownWorkers {
				dir := ""
				if r.slotCaches != "" {
					if d, err := os.MkdirTemp(r.slotCaches, "slot-"); err == nil {
						dir = d
						wipe = func() { wipeDir(d) }
					}
				}
				c, release = slotChecker(r.checker, dir)
			}
			defer release()
			for lo, hi, ok := take(); ok; lo, hi, ok = take() {
				progs := make([]fuzz.Program, 0, hi-lo)
				srcs := make([][]byte, 0, hi-lo)
				for i := lo; i < hi; i++ {
					p := fuzz.Generate(r.seed+uint64(i), r.cfg)
					progs = append(progs, p)
					srcs = append(srcs, p.Source)
				}
				// One build of the chunk's programs (and their variants)
				// per native executor; a failure only means each program
				// builds alone.
				_ = c.Prebuild(ctx, srcs)
				for k, p := range progs {
					results <- r.one(ctx, c, lo+k, p)
				}
				wipe()
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	var st fuzzStats
	var fatal error
	apply := func(o outcome) {
		switch {
		case o.cancelled:
		case o.err != nil:
			if fatal == nil {
				fatal = o.err
				cancel()
			}
		case !o.checked:
			// A generated program that does not check is a generator bug:
			// report it and go on.
			fmt.Fprintf(stderr, "\r%s\n", o.msg)
		default:
			st.programs++
			st.excused += o.rep.Excused
			if !o.rep.OK() {
				if st.findings == 0 {
					st.firstFound = r.seed + uint64(o.i)
				}
				st.findings++
				fmt.Fprint(stdout, o.msg)
			}
			r.progress(stderr, st, time.Since(start))
		}
	}
	pending := map[int]outcome{}
	want := 0
	for o := range results {
		pending[o.i] = o
		for o, ok := pending[want]; ok; o, ok = pending[want] {
			delete(pending, want)
			want++
			apply(o)
		}
	}
	if r.term {
		fmt.Fprint(stderr, "\r\033[K")
	}
	st.elapsed = time.Since(start)
	switch {
	case fatal != nil:
		return st, fatal
	case parent.Err() != nil:
		return st, parent.Err()
	}
	return st, nil
}

// fuzzChunk is how many consecutive programs a goroutine of `rxeq fuzz`
// takes at once: their native code (and their variants') is built by one
// compiler run into one library (fuzz.Checker.Prebuild). Measured on two
// cores with tcc: 8 programs and their variants in one build cost about a
// third of the compile time of one build each; larger chunks win little
// more.
const fuzzChunk = 8

// slotChecker returns a copy of c for one goroutine of a session: each
// executor that is an executor.Slotter (native code in workers) gets a
// slot of its own, a worker reused for all the goroutine's programs,
// building into buildDir when that is not "". release stops the workers.
func slotChecker(c *fuzz.Checker, buildDir string) (*fuzz.Checker, func()) {
	own := *c
	own.Executors = slices.Clone(c.Executors)
	var slots []io.Closer
	for i, e := range own.Executors {
		if s, ok := e.(executor.Slotter); ok {
			var cl io.Closer
			own.Executors[i], cl = s.Slot(buildDir)
			slots = append(slots, cl)
		}
	}
	return &own, func() {
		for _, s := range slots {
			_ = s.Close()
		}
	}
}

// wipeDir removes what dir holds, keeping dir itself.
func wipeDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// one checks program i (p) with c and, when it disagrees, reduces and
// saves it.
func (r *fuzzRun) one(ctx context.Context, c *fuzz.Checker, i int, p fuzz.Program) outcome {
	seed := r.seed + uint64(i)
	rep, err := c.Check(ctx, p.Source)
	switch {
	case ctx.Err() != nil:
		return outcome{i: i, cancelled: true}
	case err != nil:
		return outcome{i: i, msg: fmt.Sprintf("seed %d: %v", seed, err)}
	}
	o := outcome{i: i, checked: true, rep: rep}
	if !rep.OK() {
		o.msg, o.err = r.save(ctx, c, p, rep.Findings[0])
		if o.err != nil && ctx.Err() != nil {
			return outcome{i: i, cancelled: true}
		}
	}
	return o
}

func (r *fuzzRun) progress(stderr io.Writer, st fuzzStats, d time.Duration) {
	rate := float64(st.programs) / max(d.Seconds(), 1e-9)
	if r.term {
		fmt.Fprintf(stderr, "\r\033[K%d programs, %d findings, %.1f programs/s", st.programs, st.findings, rate)
		return
	}
	if st.programs%100 == 0 {
		fmt.Fprintf(stderr, "%d programs, %d findings, %.1f programs/s\n", st.programs, st.findings, rate)
	}
}

// save reduces p keeping f, writes seed-N.rx and seed-N.reduced.rx and
// returns the lines that announce them.
func (r *fuzzRun) save(ctx context.Context, c *fuzz.Checker, p fuzz.Program, f fuzz.Finding) (string, error) {
	small, stats, rerr := r.reducer.ReduceFinding(ctx, p.Source, f, fuzz.ReduceChecker(f, c, r.checker))
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return "", fmt.Errorf("saving seed %d: %w", p.Seed, err)
	}
	base := filepath.Join(r.out, fmt.Sprintf("seed-%d", p.Seed))
	rerun := fmt.Sprintf("rxeq fuzz --seed %d --count 1 --executors %s%s", p.Seed, r.execList, r.external.flags())
	if !r.isolate {
		rerun += " --isolate=false"
	}
	rerun += generatorFlags(r.cfg)
	// Flags both commands share, when not at their defaults.
	shared := ""
	switch n := r.checker.NoiseRuns; {
	case n < 0:
		shared += " --noise-runs 0"
	case n > 0 && n != fuzz.DefaultNoiseRuns:
		shared += fmt.Sprintf(" --noise-runs %d", n)
	}
	if r.timeout > 0 && r.timeout != defaultFuzzTimeout {
		shared += " --timeout " + r.timeout.String()
	}
	if t := r.checker.Tolerance; t != nil && *t != fuzz.DefaultTolerance() {
		shared += fmt.Sprintf(" --rtol %g --atol %g", t.RTol, t.ATol)
	}
	if f.Kind == fuzz.KindMetamorphic {
		shared += fmt.Sprintf(" --emi %d", max(r.checker.Metamorphic, 1))
	} else if r.checker.Metamorphic != 1 {
		rerun += fmt.Sprintf(" --emi %d", r.checker.Metamorphic)
	}
	rerun += shared
	check := func(file string) string {
		s := "rxeq reduce --executors " + r.execList + r.external.flags()
		if !r.isolate {
			s += " --isolate=false"
		}
		return s + shared + " " + file
	}
	orig := header(p.Seed, f, rerun, check(base+".rx"), "") + string(p.Source)
	note := reduceNote(p.Source, small, stats)
	if rerr != nil {
		note += fmt.Sprintf("; reduction stopped: %v", rerr)
	}
	red := header(p.Seed, f, rerun, check(base+".reduced.rx"), note) + string(small)
	if err := os.WriteFile(base+".rx", []byte(orig), 0o644); err != nil {
		return "", fmt.Errorf("saving seed %d: %w", p.Seed, err)
	}
	if err := os.WriteFile(base+".reduced.rx", []byte(red), 0o644); err != nil {
		return "", fmt.Errorf("saving seed %d: %w", p.Seed, err)
	}
	return fmt.Sprintf("FOUND seed %d: %s\n  saved %s.rx and %s.reduced.rx (%s)\n", p.Seed, firstLine(f.String()), base, base, note), nil
}

// generatorFlags are the flags that make the generator draw cfg's
// programs again.
func generatorFlags(cfg fuzz.Config) string {
	var b strings.Builder
	for _, f := range []struct {
		name string
		v    int
	}{{"max-funcs", cfg.MaxFuncs}, {"max-stmts", cfg.MaxStmts}, {"max-depth", cfg.MaxDepth}, {"max-expr-depth", cfg.MaxExprDepth}} {
		if f.v != 0 {
			fmt.Fprintf(&b, " --%s %d", f.name, f.v)
		}
	}
	if cfg.Features != 0 {
		fmt.Fprintf(&b, " --features %s", cfg.Features)
	}
	if cfg.Exclude != 0 {
		fmt.Fprintf(&b, " --exclude %s", cfg.Exclude)
	}
	return b.String()
}

// reduceNote says how a reduction went, in one line.
func reduceNote(from, to []byte, st fuzz.ReduceStats) string {
	return fmt.Sprintf("reduced from %d to %d statements (%d candidates, %d tested, %s)",
		fuzz.CountStmts(from), fuzz.CountStmts(to), st.Tries, st.Tested, st.Elapsed.Round(time.Millisecond))
}

// header is the comment block a reproducer starts with.
func header(seed uint64, f fuzz.Finding, rerun, check, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// rxeq fuzz finding, seed %d\n", seed)
	sig := f.Signature()
	fmt.Fprintf(&b, "// signature: %s vs %s, %s", sig.Executor, sig.Reference, sig.Kind)
	if sig.Func != "" {
		fmt.Fprintf(&b, " in %s", sig.Func)
	}
	if sig.PanicOrPrepareText != "" {
		fmt.Fprintf(&b, ", %q", sig.PanicOrPrepareText)
	}
	if sig.Output != "" {
		fmt.Fprintf(&b, ", output %s", sig.Output)
	}
	if sig.RefKind != "" || sig.GotKind != "" {
		fmt.Fprintf(&b, ", errors %q vs %q", sig.RefKind, sig.GotKind)
	}
	b.WriteString("\n")
	for _, l := range strings.Split(strings.TrimRight(f.String(), "\n"), "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	if note != "" {
		fmt.Fprintf(&b, "// %s\n", note)
	}
	fmt.Fprintf(&b, "// rerun: %s\n", rerun)
	fmt.Fprintf(&b, "// check this file: %s\n\n", check)
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// cmdReduce is `rxeq reduce [--executors …] [--write] FILE`.
func cmdReduce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("reduce", "[flags] FILE", stdout, stderr)
	execList := fs.String("executors", defaultFuzzExecutors(), "comma-separated executors: oracle (the reference) and fallback, native, torch (needs libtorch), --executor names")
	var external executorSpecs
	fs.Var(&external, "executor", "define an external executor `NAME=COMMAND` speaking rxeq.executor/v1, to name in --executors (repeatable)")
	isolated := fs.Bool("isolate", true, "run native code in a worker process")
	write := fs.Bool("write", false, "write FILE.reduced.rx instead of printing the reduced program")
	var red fuzz.Reducer
	fs.DurationVar(&red.MaxTime, "time", 0, "time budget for the reduction (0: none)")
	fs.IntVar(&red.MaxTests, "max-tests", 0, "most candidate programs tested (0: no bound)")
	timeout := fs.Duration("timeout", defaultFuzzTimeout, "with --isolate, a native run taking longer is killed and reported as a finding")
	noise := fs.Int("noise-runs", fuzz.DefaultNoiseRuns, "oracle runs rounding to float32 that measure how far rounding can move an output that disagrees (0: none, plain tolerance)")
	emi := fs.Int("emi", 0, "equivalent variants each executor must compute bit for bit the same (for a metamorphic finding)")
	mem := maxMemory(fs)
	programCC := fs.String("program-cc", "auto", programCCUsage)
	tol := tolerance(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || red.MaxTime < 0 || red.MaxTests < 0 || *timeout <= 0 || *noise < 0 || *emi < 0 ||
		tol.RTol < 0 || tol.ATol < 0 {
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	cache, cleanup, err := fuzzCache()
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %v\n", err)
		return exitFail
	}
	defer cleanup()
	checker, err := buildChecker(*execList, nativeSetup{isolate: *isolated, cacheDir: cache, timeout: *timeout, external: external,
		programCC: resolveProgramCC(*programCC), rtCache: runtimeCache()})
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %v\n", err)
		return exitUsage
	}
	defer executor.CloseAll(checker.Executors)
	// The settings go on the checker before it is copied: the reducer of a
	// crash or a timeout uses the original (a worker per candidate), and
	// it must reproduce the finding under the same --emi, tolerance,
	// noise runs and memory budget.
	checker.NoiseRuns = noiseRuns(*noise)
	checker.Tolerance = tol
	checker.MaxMemory = mem.resolve()
	checker.Metamorphic = *emi
	own := checker
	checker, release := slotChecker(checker, "") // one worker for every candidate
	defer release()
	src, err := program.ReadFile(name)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %v\n", err)
		return exitUsage
	}
	rep, err := checker.Check(ctx, src)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %s: %v\n", name, err)
		if errors.Is(err, fuzz.ErrProgram) {
			return exitUsage
		}
		return exitFail
	}
	if rep.OK() {
		fmt.Fprintf(stderr, "rxeq reduce: %s: no finding (%d runs agree)\n", name, rep.Runs)
		return exitFail
	}
	f := rep.Findings[0]
	fmt.Fprintf(stderr, "finding: %s\n", firstLine(f.String()))
	small, stats, err := red.ReduceFinding(ctx, src, f, fuzz.ReduceChecker(f, checker, own))
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %v (keeping the smallest program so far)\n", err)
	}
	fmt.Fprintf(stderr, "%s\n", reduceNote(src, small, stats))
	if *write {
		out := strings.TrimSuffix(name, ".rx") + ".reduced.rx"
		if werr := os.WriteFile(out, small, 0o644); werr != nil {
			fmt.Fprintf(stderr, "rxeq reduce: %v\n", werr)
			return exitFail
		}
		fmt.Fprintf(stderr, "wrote %s\n", out)
	} else {
		_, _ = stdout.Write(small)
	}
	if err != nil && !errors.Is(err, fuzz.ErrBudget) {
		return exitFail // cancelled: the program is the smallest so far
	}
	return exitOK
}

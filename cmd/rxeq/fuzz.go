package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
)

// fuzzRun is one `rxeq fuzz` session: the campaign (fuzz.Campaign) and
// the flags its reproducers' commands repeat.
type fuzzRun struct {
	fuzz.Campaign
	execList string        // the --executors value, for the rerun command
	external executorSpecs // --executor NAME=COMMAND
	isolate  bool
	timeout  time.Duration // --timeout; 0 when not given (tests)
}

// run runs the campaign, its reproducers naming r's commands.
func (r *fuzzRun) run(ctx context.Context) (fuzz.Stats, error) {
	c := r.Campaign
	c.Commands = r.commands
	return c.Run(ctx)
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

func cmdFuzz(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fuzz", "[flags]", stdout, stderr)
	var r fuzzRun
	fs.Uint64Var(&r.Seed, "seed", 1, "seed of the first program (program i has seed N+i)")
	fs.IntVar(&r.Count, "count", 0, "programs to run (default 100 without --time)")
	fs.DurationVar(&r.Time, "time", 0, "run until this much time has passed (with --count: whichever comes first)")
	fs.StringVar(&r.execList, "executors", defaultFuzzExecutors(), "comma-separated executors: oracle (the reference) and fallback, native, torch (needs libtorch), onnxruntime, onnxruntime-noopt (need the ONNX Runtime library), pytorch, torchscript, numpy (need python3-torch, python3-numpy), --executor names")
	fs.Var(&r.external, "executor", "define an external executor `NAME=COMMAND` speaking rxeq.executor/v1, to name in --executors (repeatable)")
	fs.StringVar(&r.Dir, "out", "rxeq-findings", "directory for the reproducers")
	fs.BoolVar(&r.isolate, "isolate", true, "run native code and ONNX Runtime in a worker process (a crash fails that program, the run goes on)")
	fs.IntVar(&r.Config.MaxFuncs, "max-funcs", 0, "most functions per program (default 3)")
	fs.IntVar(&r.Config.MaxStmts, "max-stmts", 0, "most top-level statements per function (default 8)")
	fs.IntVar(&r.Config.MaxDepth, "max-depth", 0, "most nested for/if levels (default 2; -1 for none)")
	fs.IntVar(&r.Config.MaxExprDepth, "max-expr-depth", 0, "deepest expression (default 3)")
	fs.BoolVar(&r.Config.Edges, "edges", false, "make every program edge-seeking: signed zeros, NaN and ±Inf at every position, Exp near overflow, Log at 0, sizes 1 to 40 (without it, one drawn program in 8 is)")
	features := fs.String("features", "", "the exact feature set of every program, e.g. tanh,matmul,for (default: each program draws its own)")
	exclude := fs.String("exclude", "", "features no program uses, e.g. softmax,exp")
	fs.DurationVar(&r.Reducer.MaxTime, "reduce-time", time.Minute, "time budget for reducing one finding (0: none); a native candidate costs a C compile (tcc, several candidates at once: a few ms; cc: 0.1 s or more)")
	fs.IntVar(&r.Reducer.MaxTests, "reduce-tests", 0, "most candidate programs tested while reducing one finding (0: no bound)")
	timeout := fs.Duration("timeout", defaultFuzzTimeout, "with --isolate, a native or ONNX Runtime run taking longer is killed and reported as a finding")
	noise := fs.Int("noise-runs", fuzz.DefaultNoiseRuns, "oracle runs rounding to float32 that measure how far rounding can move an output that disagrees (0: none, plain tolerance)")
	emi := fs.Int("emi", 1, "equivalent variants of each agreeing program (a loop split, a loop of one trip, a branch that never runs) that every executor must compute bit for bit the same (0: none)")
	fs.IntVar(&r.Parallel, "parallel", runtime.GOMAXPROCS(0), "programs checked at once")
	ledgerFile := fs.String("ledger", "", "known-discrepancy ledger FILE (default: the checked-in ledger/known.json; \"none\" for none)")
	strict := fs.Bool("strict", false, "fail when a ledger entry's program no longer reproduces its discrepancy (xpass)")
	jsonOut := fs.String("json", "", "write the findings table, every distinct finding and the ledger checks to FILE as JSON")
	signedZeros := fs.Bool("signed-zeros", false, "the sign of a zero must match the oracle's in every output (as //rx:signed-zeros)")
	invariance := fs.Bool("invariance", true, "check each executor against itself for position and batch invariance on row-independent functions")
	roundTrip := fs.Bool("roundtrip", true, "export each function to ONNX, import the model back and hold the imported program to the original under the oracle, bit for bit (--executors oracle: that check alone)")
	allVariants := fs.Bool("all-variants", false, "run every program through every variant of native that must give its bits (native-avx2, native-sse2, native-c, native-tiled) instead of one per program in turn")
	mem := maxMemory(fs)
	programCC := fs.String("program-cc", "auto", programCCUsage)
	tol := tolerance(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var ferr error
	if r.Config.Features, ferr = fuzz.ParseFeatures(*features); ferr == nil {
		r.Config.Exclude, ferr = fuzz.ParseFeatures(*exclude)
	}
	if ferr != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", ferr)
		return exitUsage
	}
	if fs.NArg() != 0 || r.Count < 0 || r.Time < 0 || r.Config.MaxFuncs < 0 || r.Config.MaxStmts < 0 || r.Config.MaxDepth < -1 || r.Config.MaxExprDepth < 0 ||
		r.Reducer.MaxTime < 0 || r.Reducer.MaxTests < 0 || *timeout <= 0 || *noise < 0 || *emi < 0 || r.Parallel < 1 || tol.RTol < 0 || tol.ATol < 0 {
		fs.Usage()
		return exitUsage
	}
	if r.Count == 0 && r.Time == 0 {
		r.Count = 100
	}
	cache, cleanup, err := fuzzCache()
	if err != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitFail
	}
	defer cleanup()
	rtCache := runtimeCache()
	checker, err := fuzzChecker(r.execList, nativeSetup{isolate: r.isolate, cacheDir: cache, timeout: *timeout, external: r.external,
		programCC: resolveProgramCC(*programCC), rtCache: rtCache}, *roundTrip)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitUsage
	}
	if cache != "" && rtCache != "" {
		// Each goroutine's isolated builds go to a directory of its own in
		// the session's private cache (the runtime library lives
		// elsewhere), emptied after each chunk.
		r.SlotDirs = cache
	}
	defer executor.CloseAll(checker.Executors)
	checker.NoiseRuns = noiseRuns(*noise)
	checker.Tolerance = tol
	checker.MaxMemory = mem.resolve()
	checker.Metamorphic = *emi
	checker.SignedZeros = *signedZeros
	checker.Invariance = *invariance
	checker.RotateTwins = !*allVariants
	led, readProgram, err := loadLedger(*ledgerFile)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitUsage
	}
	r.timeout = *timeout
	r.Checker = checker
	r.Ledger = led
	r.Framework = frameworkOf
	r.Repro = writeRepro
	r.Found, r.Progress, r.Terminal = stdout, stderr, isTerminal(stderr)
	st, err := r.run(ctx)
	if errors.Is(err, executor.ErrByName) {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitUsage
	}
	rate := 0.0
	if st.Elapsed > 0 {
		rate = float64(st.Programs) / st.Elapsed.Seconds()
	}
	var checks []fuzz.LedgerCheck
	if err == nil {
		checks, err = fuzz.CheckLedger(ctx, checker, led, frameworkOf, readProgram)
	}
	if len(st.Records) > 0 {
		fmt.Fprintln(stdout)
		fuzz.WriteTable(stdout, st.Records)
	}
	xpass := 0
	for _, lc := range checks {
		if lc.Status == fuzz.StatusXPass {
			xpass++
			fmt.Fprintf(stdout, "XPASS ledger %s: its program no longer fails\n", lc.Entry)
		}
	}
	fmt.Fprintf(stdout, "%d programs, %d findings, %.1f programs/s; %d output elements excused as float32 rounding noise; %d new, %d xfail, %d distinct; ledger %d xfail, %d xpass\n",
		st.Programs, st.Findings, rate, st.Excused, st.New(), st.XFail, len(st.Records), len(checks)-xpass, xpass)
	if *jsonOut != "" {
		if werr := writeFuzzJSON(*jsonOut, st, checks); werr != nil {
			fmt.Fprintf(stderr, "rxeq fuzz: %v\n", werr)
			return exitFail
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "rxeq fuzz: %v\n", err)
		return exitFail
	}
	if st.New() > 0 || err != nil || (*strict && xpass > 0) {
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
	if os.Getenv(builtin.EnvCache) != "" {
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
	if d := cmp.Or(os.Getenv(builtin.EnvRuntimeCache), os.Getenv(builtin.EnvCache)); d != "" {
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
	if v := os.Getenv(builtin.EnvProgramCC); v != "" {
		return v
	}
	if _, err := exec.LookPath("tcc"); err == nil {
		return "tcc"
	}
	return ""
}

// defaultFuzzExecutors is the default of fuzz's and reduce's --executors:
// oracle, fallback and native, then the variants of native that must give
// its bits (native-avx2, native-sse2, native-c, native-tiled: compared
// with native bit for bit, no oracle run) that this CPU and
// $RXEQ_NATIVE_ISA allow; or oracle and fallback in an rxeq that cannot
// run native code (built without cgo), so that a plain `rxeq fuzz` works
// in every build.
func defaultFuzzExecutors() string {
	if native.Available() != nil {
		return "oracle,fallback"
	}
	names := []string{"oracle", "fallback", "native"}
	cfg := builtin.Config{}.FromEnv(os.Getenv)
	for _, v := range nativeVariants {
		if cfg.Available(v) == nil {
			names = append(names, string(v))
		}
	}
	return strings.Join(names, ",")
}

// nativeVariants are the executors that must give native's bits, in the
// order the fuzzer's default set lists them.
var nativeVariants = []executor.Name{executor.NativeAVX2, executor.NativeSSE2, executor.NativeC, executor.NativeTiled}

// buildChecker turns --executors into a checker: the oracle is always the
// reference; at least one other executor must be listed.
func buildChecker(list string, ns nativeSetup) (*fuzz.Checker, error) {
	cfg := builtin.Config{Isolate: ns.isolate, CacheDir: ns.cacheDir, CallTimeout: ns.timeout, ProgramCC: ns.programCC,
		RuntimeCacheDir: ns.rtCache, Version: version}.FromEnv(os.Getenv)
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
		return nil, fmt.Errorf("%w: --executors %q: name fallback, native or torch to compare with the oracle", errNoExecutors, list)
	}
	return &fuzz.Checker{Reference: sel.Reference, Executors: sel.Executors}, nil
}

// errNoExecutors is the kind of buildChecker's error for an --executors
// list that names the oracle alone.
var errNoExecutors = errors.New("no executor to compare")

// fuzzChecker is buildChecker for fuzz and reduce: with roundTrip the
// checker also sends every function through the ONNX round trip
// (fuzz.ONNXTrip), and the list may name the oracle alone, for a checker
// that checks the round trip and nothing else (fuzz.Checker.ReferenceOnly).
func fuzzChecker(list string, ns nativeSetup, roundTrip bool) (*fuzz.Checker, error) {
	c, err := buildChecker(list, ns)
	switch {
	case roundTrip && errors.Is(err, errNoExecutors):
		return &fuzz.Checker{Reference: builtin.Reference(), ReferenceOnly: true, RoundTrip: fuzz.ONNXTrip}, nil
	case err != nil:
		return nil, err
	}
	if roundTrip {
		c.RoundTrip = fuzz.ONNXTrip
	}
	return c, nil
}

// commands are the rerun and check commands of a reproducer of finding
// f (fuzz.Campaign.Commands): `rxeq fuzz` drawing program seed again and
// `rxeq reduce` checking file, with the flags of this session that are
// not at their defaults.
func (r *fuzzRun) commands(seed uint64, f fuzz.Finding, file string) (rerun, check string) {
	rerun = fmt.Sprintf("rxeq fuzz --seed %d --count 1 --executors %s%s", seed, r.execList, r.external.flags())
	if !r.isolate {
		rerun += " --isolate=false"
	}
	rerun += generatorFlags(r.Config)
	// Flags both commands share, when not at their defaults.
	shared := ""
	switch n := r.Checker.NoiseRuns; {
	case n < 0:
		shared += " --noise-runs 0"
	case n > 0 && n != fuzz.DefaultNoiseRuns:
		shared += fmt.Sprintf(" --noise-runs %d", n)
	}
	if r.timeout > 0 && r.timeout != defaultFuzzTimeout {
		shared += " --timeout " + r.timeout.String()
	}
	if t := r.Checker.Tolerance; t != nil && *t != fuzz.DefaultTolerance() {
		shared += fmt.Sprintf(" --rtol %g --atol %g", t.RTol, t.ATol)
	}
	if f.Kind == fuzz.KindMetamorphic {
		shared += fmt.Sprintf(" --emi %d", max(r.Checker.Metamorphic, 1))
	} else if r.Checker.Metamorphic != 1 {
		rerun += fmt.Sprintf(" --emi %d", r.Checker.Metamorphic)
	}
	reduceOnly := ""
	if f.Kind == fuzz.KindPosition {
		reduceOnly = " --invariance"
	} else if !r.Checker.Invariance {
		rerun += " --invariance=false"
	}
	if r.Checker.RoundTrip == nil {
		rerun += " --roundtrip=false"
	}
	if r.Checker.SignedZeros {
		shared += " --signed-zeros"
	}
	rerun += shared
	if f.Executor == fuzz.RoundTripName {
		// The round trip alone reduces it: the oracle and no executor.
		return rerun, "rxeq reduce --executors oracle --roundtrip" + shared + " " + file
	}
	check = "rxeq reduce --executors " + r.execList + r.external.flags()
	if !r.isolate {
		check += " --isolate=false"
	}
	return rerun, check + shared + reduceOnly + " " + file
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
	if cfg.Edges {
		b.WriteString(" --edges")
	}
	if cfg.Features != 0 {
		fmt.Fprintf(&b, " --features %s", cfg.Features)
	}
	if cfg.Exclude != 0 {
		fmt.Fprintf(&b, " --exclude %s", cfg.Exclude)
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// cmdReduce is `rxeq reduce [--executors …] [--write] FILE`.
func cmdReduce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("reduce", "[flags] FILE", stdout, stderr)
	execList := fs.String("executors", defaultFuzzExecutors(), "comma-separated executors: oracle (the reference) and fallback, native, torch (needs libtorch), onnxruntime, onnxruntime-noopt (need the ONNX Runtime library), pytorch, torchscript, numpy (need python3-torch, python3-numpy), --executor names")
	var external executorSpecs
	fs.Var(&external, "executor", "define an external executor `NAME=COMMAND` speaking rxeq.executor/v1, to name in --executors (repeatable)")
	isolated := fs.Bool("isolate", true, "run native code and ONNX Runtime in a worker process")
	write := fs.Bool("write", false, "write FILE.reduced.rx instead of printing the reduced program")
	var red fuzz.Reducer
	fs.DurationVar(&red.MaxTime, "time", 0, "time budget for the reduction (0: none)")
	fs.IntVar(&red.MaxTests, "max-tests", 0, "most candidate programs tested (0: no bound)")
	timeout := fs.Duration("timeout", defaultFuzzTimeout, "with --isolate, a native or ONNX Runtime run taking longer is killed and reported as a finding")
	noise := fs.Int("noise-runs", fuzz.DefaultNoiseRuns, "oracle runs rounding to float32 that measure how far rounding can move an output that disagrees (0: none, plain tolerance)")
	emi := fs.Int("emi", 0, "equivalent variants each executor must compute bit for bit the same (for a metamorphic finding)")
	invariance := fs.Bool("invariance", false, "check each executor against itself for position and batch invariance (for a position finding)")
	roundTrip := fs.Bool("roundtrip", false, "export each function to ONNX, import it back and hold the imported program to the original under the oracle (for a round-trip finding; --executors oracle: that check alone)")
	signedZeros := fs.Bool("signed-zeros", false, "the sign of a zero must match the oracle's in every output")
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
	checker, err := fuzzChecker(*execList, nativeSetup{isolate: *isolated, cacheDir: cache, timeout: *timeout, external: external,
		programCC: resolveProgramCC(*programCC), rtCache: runtimeCache()}, *roundTrip)
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
	checker.Invariance = *invariance
	checker.SignedZeros = *signedZeros
	own := checker
	checker, slot := checker.Slot("") // one worker for every candidate
	defer slot.Close()
	src, err := program.ReadFile(name)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %v\n", err)
		return exitUsage
	}
	rep, err := checker.Check(ctx, src)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq reduce: %s: %v\n", name, err)
		if errors.Is(err, fuzz.ErrProgram) || errors.Is(err, executor.ErrByName) {
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
	fmt.Fprintf(stderr, "%s\n", fuzz.ReduceNote(src, small, stats))
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

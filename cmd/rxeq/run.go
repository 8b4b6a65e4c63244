package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/onnx/ortrepro"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/pyexport"
	"github.com/rextio/rxeq/reports"
)

// version is rxeq's version, written into reports.
const version = "0.1.0-dev"

// isolateGrace is added to the case timeout under --isolate (and when
// isolated ONNX Runtime executors run), so that the worker's own timeout
// (which kills and restarts it) fires first.
const isolateGrace = 5 * time.Second

// runFlags are the flags of `rxeq run` (and, in part, `rxeq lock`).
type runFlags struct {
	json, junit, dump string
	inputs            string
	backends, batches string
	seed              string
	shard             string
	nativeMode        string
	parallel          int
	torchThreads      int
	timeout           time.Duration
	startTimeout      time.Duration // --start-timeout
	compileTimeout    time.Duration
	isolate           bool
	isolateORT        bool // --isolate-ort (default true)
	maxMemory         *memoryFlag
	maxULP            int64
	errorKinds        bool
	external          executorSpecs // --executor NAME=COMMAND
	funcMap           funcMaps      // --executor-func NAME:FUNC=THEIRS
	ledger            string        // --ledger
	strict            bool          // --strict
	invariance        bool          // --invariance
	signedZeros       bool          // --signed-zeros
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", "[flags] [PATH...]", stdout, stderr)
	var rf runFlags
	fs.StringVar(&rf.json, "json", "", "write the JSON report (rxeq.report/v1) to `FILE`")
	fs.StringVar(&rf.junit, "junit", "", "write the JUnit XML report to `FILE`")
	fs.StringVar(&rf.dump, "dump", "", "write every case's inputs and outputs as .npy files with a manifest.json under `DIR`")
	fs.StringVar(&rf.inputs, "inputs", "", "read each parameter from a .npy file under `DIR` instead of generating it (see docs/inputs.md)")
	fs.StringVar(&rf.backends, "backend", "", "comma-separated executors to report: oracle, fallback, native, torch, onnxruntime, onnxruntime-noopt, pytorch, torchscript, numpy and --executor names (default oracle, fallback, native and, when libtorch is installed, torch)")
	fs.StringVar(&rf.backends, "executors", "", "the same as --backend (the name rxeq fuzz and reduce use)")
	fs.StringVar(&rf.batches, "batch", "", "comma-separated batch sizes replacing each scenario's //rx:batches")
	fs.StringVar(&rf.seed, "seed", "", "seed replacing each scenario's //rx:seed")
	fs.StringVar(&rf.shard, "shard", "", "run shard `i/n` of the cases (n jobs cover every case once)")
	fs.StringVar(&rf.nativeMode, "native-mode", "forced", "native backend mode: forced (never falls back) or auto")
	fs.IntVar(&rf.parallel, "parallel", 0, "case groups run at once (default: number of CPUs)")
	fs.IntVar(&rf.torchThreads, "torch-threads", 1, "intra-op threads of the torch executor (libtorch's at::set_num_threads)")
	fs.DurationVar(&rf.timeout, "timeout", harness.DefaultCaseTimeout, "timeout of one executor on one case")
	fs.DurationVar(&rf.startTimeout, "start-timeout", 0, "the longest an external or generated-code executor's process may take to start (or restart) and say hello, outside any case's time (default: --timeout, at most 1m)")
	fs.DurationVar(&rf.compileTimeout, "compile-timeout", native.DefaultCompileTimeout, "timeout of one C compiler run (the compiler and its children are killed)")
	rf.maxMemory = maxMemory(fs)
	fs.BoolVar(&rf.errorKinds, "error-kinds", false, "compare runtime errors by kind only (division by zero, shape, dtype), not by rxeq's exact text")
	fs.Int64Var(&rf.maxULP, "max-ulp", 0, "also fail a float output more than `N` float32 ULPs from the oracle rounded to float32 (besides rtol/atol; a //rx:tolerance ulp= keeps its own; 0: none)")
	fs.BoolVar(&rf.isolate, "isolate", false, "run native code and ONNX Runtime in a worker process: a crash or hang fails that case and the run goes on")
	fs.BoolVar(&rf.isolateORT, "isolate-ort", true, "run ONNX Runtime in a worker process even without --isolate (false: in rxeq's process, where a crash of ONNX Runtime ends the run)")
	fs.Var(&rf.external, "executor", "add an external executor `NAME=COMMAND` speaking rxeq.executor/v1 (repeatable; see docs/executor-protocol.md)")
	fs.Var(&rf.funcMap, "executor-func", "external executor NAME knows function FUNC as THEIRS: `NAME:FUNC=THEIRS` (repeatable)")
	fs.StringVar(&rf.ledger, "ledger", "", "known-discrepancy ledger `FILE` (default: the checked-in ledger/known.json; \"none\" for none)")
	fs.BoolVar(&rf.strict, "strict", false, "a case that passes where a ledger entry expects it to fail (xpass) fails the run")
	fs.BoolVar(&rf.invariance, "invariance", false, "also check each executor against itself for position and batch invariance on row-independent functions")
	fs.BoolVar(&rf.signedZeros, "signed-zeros", false, "the sign of a zero must match the oracle's in every output (as //rx:signed-zeros)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	led, readProgram, lerr := loadLedger(rf.ledger)
	if lerr != nil {
		fmt.Fprintf(stderr, "rxeq run: %v\n", lerr)
		return exitUsage
	}
	opts, err := rf.options()
	if err == nil {
		err = checkOutputs(rf)
	}
	if err == nil && rf.signedZeros {
		t := compare.DefaultTolerance()
		if opts.Tolerance != nil {
			t = *opts.Tolerance
		}
		t.SignedZeros = true
		opts.Tolerance = &t
	}
	if err != nil {
		fmt.Fprintf(stderr, "rxeq run: %v\n", err)
		return exitUsage
	}
	defer executor.CloseAll(opts.Executors)
	files, ok := loadPrograms(fs.Args(), true, stderr)
	if !ok {
		return exitUsage
	}

	width, tty := terminalWidth(stderr)
	prog := newProgress(stderr, tty, width)
	opts.Progress = prog.group
	var mu sync.Mutex
	var groups []harness.GroupTensors
	if rf.dump != "" {
		opts.Tensors = func(g harness.GroupTensors) {
			mu.Lock()
			groups = append(groups, g)
			mu.Unlock()
		}
	}
	res, err := harness.Run(ctx, files, opts)
	prog.finish()
	var invValues map[string]string
	if err == nil && rf.invariance {
		invValues, err = addInvarianceCases(ctx, res, files, opts)
	}
	applyLedger(res, files, led, readProgram, rf.strict, invValues)
	if err != nil {
		if errors.Is(err, harness.ErrOptions) {
			// Every unusable input file, one per line.
			fmt.Fprintf(stderr, "rxeq run: %s\n", strings.ReplaceAll(err.Error(), "\n", "\nrxeq run: "))
			return exitUsage
		}
		fmt.Fprintf(stderr, "rxeq run: %v\n", err)
		if res == nil {
			return exitFail
		}
	}
	printReplays(stdout, res)
	printTable(stdout, res)
	printFailures(stdout, res)
	printSummary(stdout, res)
	if werr := writeReports(res, rf, opts, groups, files); werr != nil {
		fmt.Fprintf(stderr, "rxeq run: %v\n", werr)
		return exitFail
	}
	if err != nil || !res.OK() {
		return exitFail
	}
	return exitOK
}

// runNames are the executors `rxeq run` builds: nil (the defaults and
// every --executor) unless --backend names a built-in executor that is
// not a default one (onnxruntime, onnxruntime-noopt); then the defaults,
// the --executor ones and those. --backend chooses what is reported, so
// naming a default executor never drops the others from the run.
func runNames(backends []executor.Name, externals executorSpecs) []executor.Name {
	var extra []executor.Name
	for _, b := range backends {
		if b != executor.Oracle && builtin.IsBuiltin(b) && !slices.Contains(builtin.DefaultNames(), b) && !slices.Contains(extra, b) {
			extra = append(extra, b)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	names := builtin.DefaultNames()
	for _, o := range externals {
		names = append(names, executor.Name(o.Name))
	}
	return append(names, extra...)
}

// options turns the flags into runner options.
func (rf runFlags) options() (harness.Options, error) {
	var opts harness.Options
	mode, err := native.ParseMode(rf.nativeMode)
	if err != nil {
		return opts, err
	}
	opts.Inputs = rf.inputs
	opts.Backends = builtin.ParseNames(rf.backends)
	if rf.torchThreads < 1 {
		return opts, fmt.Errorf("--torch-threads %d: want a positive number", rf.torchThreads)
	}
	for _, b := range splitList(rf.batches) {
		n, err := strconv.Atoi(b)
		if err != nil || n <= 0 {
			return opts, fmt.Errorf("--batch %q: want positive integers, like --batch 1,16,128", rf.batches)
		}
		if n > harness.MaxBatch {
			return opts, fmt.Errorf("--batch %d: at most %d, the limit of //rx:batches", n, harness.MaxBatch)
		}
		opts.Batches = append(opts.Batches, n)
	}
	if rf.seed != "" {
		s, err := strconv.ParseUint(rf.seed, 0, 64)
		if err != nil {
			return opts, fmt.Errorf("--seed %q: want an unsigned integer", rf.seed)
		}
		opts.Seed = &s
	}
	if rf.shard != "" {
		sh, err := harness.ParseShard(rf.shard)
		if err != nil {
			return opts, err
		}
		opts.Shard = sh
	} else {
		// Without --shard, the CI system's own shard variables (Bazel's
		// TEST_SHARD_INDEX/TEST_TOTAL_SHARDS, GitLab's CI_NODE_INDEX/
		// CI_NODE_TOTAL) choose this job's part.
		sh, _, err := harness.ShardFromEnv(os.Getenv)
		if err != nil {
			return opts, err
		}
		opts.Shard = sh
	}
	if rf.parallel < 0 {
		return opts, fmt.Errorf("--parallel %d: want a positive number", rf.parallel)
	}
	opts.Parallel = rf.parallel
	if rf.maxMemory != nil {
		opts.MaxMemory = int64(*rf.maxMemory)
	}
	if rf.maxULP < 0 {
		return opts, fmt.Errorf("--max-ulp %d: want 0 (no bound) or a positive number", rf.maxULP)
	}
	opts.MaxULP = rf.maxULP
	opts.ErrorKinds = rf.errorKinds
	opts.CaseTimeout = rf.timeout
	if rf.startTimeout < 0 {
		return opts, fmt.Errorf("--start-timeout %v: want a positive duration, like 30s (0: the default)", rf.startTimeout)
	}
	if rf.compileTimeout <= 0 {
		return opts, fmt.Errorf("--compile-timeout %v: want a positive duration, like 2m", rf.compileTimeout)
	}
	// Under --isolate, the worker's own timeout (CallTimeout) reports
	// "native timed out after …", and an external executor's kills and
	// restarts it: the case timeout gets a grace period on top.
	cfg := builtin.Config{Mode: mode, CompileTimeout: rf.compileTimeout, TorchThreads: rf.torchThreads,
		Isolate: rf.isolate, IsolateORT: rf.isolateORT, CallTimeout: rf.timeout, StartTimeout: rf.startTimeout, Version: version}.FromEnv(os.Getenv)
	if err := rf.funcMap.apply(rf.external); err != nil {
		return opts, err
	}
	sel, err := builtin.Select(runNames(opts.Backends, rf.external), cfg, rf.external)
	if err != nil {
		return opts, err
	}
	opts.Executors, opts.Unavailable = sel.Executors, sel.Unavailable
	for _, u := range sel.Unavailable {
		if slices.Contains(opts.Backends, u.Executor) {
			sel.Close()
			return opts, fmt.Errorf("--backend %s: %s", u.Executor, u.Reason)
		}
	}
	isolatedORT := rf.isolateORT && slices.ContainsFunc(sel.Executors, func(e executor.Executor) bool {
		return e.Name() == executor.ONNXRuntime || e.Name() == executor.ONNXRuntimeNoOpt
	})
	if (rf.isolate || isolatedORT || len(rf.external) > 0) && rf.timeout > 0 {
		opts.CaseTimeout = rf.timeout + isolateGrace
	}
	return opts, nil
}

// reproFiles writes a repro.py (pyexport.Repro) for each generated-code
// executor (pytorch, torchscript, numpy), a repro.py of ortrepro.Repro
// for onnxruntime and onnxruntime-noopt, or a repro.js (jsexport.Repro)
// for tfjs-cpu and tfjs-wasm, whose case of group g failed, errored or
// failed as the ledger expects (xfail: a known discrepancy's reproducer
// is what goes upstream): repro_EXECUTOR.py or repro_EXECUTOR.js, beside
// the case's .npy files.
func reproFiles(res *harness.Result, g harness.GroupTensors, files []*program.File) map[string][]byte {
	var out map[string][]byte
	for _, c := range res.Cases {
		if c.Scenario != g.Scenario || c.Function != g.Function || c.Batch != g.Batch ||
			(c.Status != harness.StatusFail && c.Status != harness.StatusError && c.Status != harness.StatusXFail) {
			continue
		}
		_, py := pyexport.FormatOf(c.Executor)
		if !py && !jsexport.IsExecutor(c.Executor) && !ortrepro.IsExecutor(c.Executor) {
			continue
		}
		i := slices.IndexFunc(files, func(f *program.File) bool { return f.ScenarioName() == c.Scenario })
		if i < 0 {
			continue
		}
		p, err := program.Lower(files[i])
		if err != nil {
			continue
		}
		o := pyexport.ReproOptions{Executor: c.Executor, Func: c.Function, Inputs: g.Inputs, Source: files[i].Name, Version: version}
		signed := false
		for _, t := range c.Tolerances {
			o.RTol, o.ATol = max(o.RTol, t.RTol), max(o.ATol, t.ATol)
			signed = signed || t.SignedZeros
		}
		name := "repro_" + string(c.Executor) + ".py"
		var b []byte
		switch {
		case py:
			b, err = pyexport.Repro(p, o)
		case ortrepro.IsExecutor(c.Executor):
			// An error may be a crash that does not come every time: a
			// few runs before the script says it is gone.
			attempts := 1
			if c.Status == harness.StatusError {
				attempts = 3
			}
			b, err = ortrepro.Repro(p, ortrepro.Options{Options: o, Tolerances: c.Tolerances, SignedZeros: signed, Attempts: attempts})
		default:
			name = "repro_" + string(c.Executor) + ".js"
			b, err = jsexport.Repro(p, jsexport.ReproOptions{Executor: c.Executor, Func: c.Function, Inputs: g.Inputs,
				RTol: o.RTol, ATol: o.ATol, Source: o.Source, Version: o.Version})
		}
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string][]byte{}
		}
		out[name] = b
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ms formats a duration for the table: milliseconds with one decimal
// below a second ("76.9ms"), seconds with two above ("2.41s").
func ms(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
}

// printTable prints one row per case and per lock. PREP is the
// executor's preparation of the scenario's program (for native and torch,
// generating and compiling the C), charged to the first case of each
// scenario and executor ("-" on the others); TIME is the rest of the
// case: input generation, execution and comparison.
func printTable(w io.Writer, res *harness.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFUNCTION\tBATCH\tEXECUTOR\tPATH\tSTATUS\tMAX ABS\tMAX ULP\tPREP\tTIME")
	for _, c := range res.Cases {
		maxAbs, maxULP, nonFinite := 0.0, uint64(0), false
		for _, o := range c.Outputs {
			maxAbs = max(maxAbs, o.MaxAbsDiff)
			nonFinite = nonFinite || o.NonFiniteMismatches > 0
		}
		for _, u := range c.ULP {
			maxULP = max(maxULP, u.MaxULP)
		}
		abs, ulp, prep := "-", "-", "-"
		switch {
		case nonFinite:
			// A NaN or an infinity against anything else: the greatest
			// difference is not a number, whatever the finite ones are.
			abs = "NaN/Inf"
		case len(c.Outputs) > 0:
			abs = strconv.FormatFloat(maxAbs, 'e', 1, 64)
		}
		if len(c.ULP) > 0 {
			ulp = strconv.FormatUint(maxULP, 10)
		}
		if c.Timing.Prepare > 0 {
			prep = ms(c.Timing.Prepare)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Scenario, c.Function, c.Batch, c.Executor, c.Path,
			strings.ToUpper(string(c.Status)), abs, ulp, prep, ms(c.Timing.Total()-c.Timing.Prepare))
	}
	for _, l := range res.Locks {
		status := "PASS"
		if !l.OK() {
			status = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t-\tlock\t%s\t%s\t-\t-\t-\t%s\n", l.Scenario, l.Function, l.Result.Func, status, ms(l.Duration))
	}
	_ = tw.Flush()
}

// printSummary prints the counts, the preparation time of each executor,
// the executors that could not run and, last, the closing line CI
// systems read: `N passed, N failed` (and `, N skipped`), cases and locks
// together, an error or a lock that does not hold counted as a failure.
func printSummary(w io.Writer, res *harness.Result) {
	pass, fail, errored := res.Counts()
	locksOK := 0
	for _, l := range res.Locks {
		if l.OK() {
			locksOK++
		}
	}
	skipped := ""
	if n := res.Skipped(); n > 0 {
		skipped = fmt.Sprintf(", %d skipped", n)
	}
	if xfail, xpass := res.Expected(); xfail+xpass > 0 {
		skipped += fmt.Sprintf(", %d xfail, %d xpass", xfail, xpass)
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d errors%s; locks %d/%d held; %s\n", pass, fail, errored, skipped, locksOK, len(res.Locks), res.Wall.Round(time.Millisecond))
	if prep := prepareTimes(res); prep != "" {
		fmt.Fprintf(w, "prepare: %s\n", prep)
	}
	for _, u := range res.Unavailable {
		fmt.Fprintf(w, "%s: not run on this machine: %s\n", u.Executor, u.Reason)
	}
	closing := fmt.Sprintf("%d passed, %d failed", pass+locksOK, fail+errored+len(res.Locks)-locksOK)
	if n := res.Skipped(); n > 0 {
		closing += fmt.Sprintf(", %d skipped", n)
	}
	if xfail, xpass := res.Expected(); xfail+xpass > 0 {
		closing += fmt.Sprintf(", %d xfail, %d xpass", xfail, xpass)
	}
	fmt.Fprintln(w, closing)
}

// prepareTimes says how long each executor took to prepare the programs,
// in the order the executors first appear, and for native builds how many
// came from the build cache: "oracle 0.1ms, native 2.41s (3 programs, 1
// cached)". It is the PREP column summed per executor.
func prepareTimes(res *harness.Result) string {
	type sum struct {
		d                time.Duration
		programs, cached int
		built            bool
	}
	var order []executor.Name
	sums := map[executor.Name]*sum{}
	for _, p := range res.Preparations {
		s := sums[p.Executor]
		if s == nil {
			s = &sum{}
			sums[p.Executor] = s
			order = append(order, p.Executor)
		}
		s.d += p.Duration
		s.programs++
		if p.Compiler != "" {
			s.built = true
			if p.Cached {
				s.cached++
			}
		}
	}
	parts := make([]string, len(order))
	for i, e := range order {
		s := sums[e]
		parts[i] = string(e) + " " + ms(s.d)
		var notes []string
		if s.programs > 1 {
			notes = append(notes, fmt.Sprintf("%d programs", s.programs))
		}
		if s.built {
			notes = append(notes, fmt.Sprintf("%d cached", s.cached))
		}
		if len(notes) > 0 {
			parts[i] += " (" + strings.Join(notes, ", ") + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// printReplays says, under --inputs, where each group's inputs came from.
func printReplays(w io.Writer, res *harness.Result) {
	for _, r := range res.Replays {
		fmt.Fprintln(w, r)
	}
	if len(res.Replays) > 0 {
		fmt.Fprintln(w)
	}
}

// checkOutputs makes sure the report files and the dump directory can be
// written before any work starts, so a typo costs no run.
func checkOutputs(rf runFlags) error {
	for _, o := range []struct{ flag, path string }{{"--json", rf.json}, {"--junit", rf.junit}} {
		if o.path == "" {
			continue
		}
		// As --dump, a missing directory is created.
		if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
			return fmt.Errorf("%s %s: cannot write it: %w", o.flag, o.path, err)
		}
		_, statErr := os.Stat(o.path)
		f, err := os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("%s %s: cannot write it: %w", o.flag, o.path, err)
		}
		f.Close()
		if os.IsNotExist(statErr) {
			os.Remove(o.path) // written at the end of the run
		}
	}
	if rf.dump != "" {
		if err := os.MkdirAll(rf.dump, 0o755); err != nil {
			return fmt.Errorf("--dump %s: cannot create it: %w", rf.dump, err)
		}
		f, err := os.CreateTemp(rf.dump, ".rxeq-write-check-*")
		if err != nil {
			return fmt.Errorf("--dump %s: cannot write in it: %w", rf.dump, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// printFailures prints the full message of every case and lock that did
// not pass.
func printFailures(w io.Writer, res *harness.Result) {
	for _, c := range res.Cases {
		if c.Status != harness.StatusPass {
			fmt.Fprintf(w, "\n--- %s %s\n%s\n", strings.ToUpper(string(c.Status)), c.Name(), indent(c.Message))
		}
	}
	for _, l := range res.Locks {
		if !l.OK() {
			msg := l.Result.Message
			if l.Error != "" {
				msg = l.Error
			}
			fmt.Fprintf(w, "\n--- FAIL %s/%s/lock\n%s\n", l.Scenario, l.Function, indent(msg))
		}
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// writeReports writes the JSON and JUnit reports and the dump, each only
// when asked for.
func writeReports(res *harness.Result, rf runFlags, opts harness.Options, groups []harness.GroupTensors, files []*program.File) error {
	var seed uint64
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	rep := reports.FromResult(res, reports.RunInfo{ToolVersion: version, Seed: seed})
	write := func(path string, fn func(io.Writer) error) error {
		if path == "" {
			return nil
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return f.Close()
	}
	if err := write(rf.json, func(w io.Writer) error { return reports.WriteJSON(w, rep) }); err != nil {
		return err
	}
	if err := write(rf.junit, func(w io.Writer) error { return reports.WriteJUnit(w, rep) }); err != nil {
		return err
	}
	if rf.dump == "" {
		return nil
	}
	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Function != b.Function {
			return a.Function < b.Function
		}
		return a.Batch < b.Batch
	})
	cases := make([]reports.DumpCase, len(groups))
	for i, g := range groups {
		cases[i] = reports.DumpCase{Name: fmt.Sprintf("%s/%s/b%d", g.Scenario, g.Function, g.Batch), Inputs: g.Inputs, Outputs: g.Outputs, Errors: g.Errors,
			Files: reproFiles(res, g, files)}
	}
	return reports.WriteDump(rf.dump, cases)
}

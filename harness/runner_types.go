package harness

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/tensor"
)

// Error kinds of the runner.
var (
	// ErrScenario: a scenario cannot be turned into cases (a parameter
	// without //rx:input, a symbolic dimension that cannot be bound, an
	// int64 tensor parameter).
	ErrScenario = errors.New("bad scenario")
	// ErrTimeout: a case ran longer than Options.CaseTimeout, or its
	// executor's own timeout killed the process running it (the Run's
	// error wraps executor.ErrTimedOut: an isolate worker, an external
	// executor). Either way the case is a StatusError, whichever way the
	// executor runs.
	ErrTimeout = errors.New("case timed out")
	// ErrOptions: the runner's options are inconsistent (a bad shard, an
	// unknown backend name, two executors with one name).
	ErrOptions = executor.ErrOptions
)

// Status is the verdict of one case.
type Status string

// The case verdicts.
const (
	// StatusPass: the executor agrees with the oracle (outputs within
	// tolerance, or the same error), and left its inputs untouched.
	StatusPass Status = "pass"
	// StatusFail: the executor ran and disagrees: an output out of
	// tolerance, a class flip, an error the oracle did not raise (or a
	// different one), a modified input, or the scenario's //rx:expect-error
	// not met.
	StatusFail Status = "fail"
	// StatusError: the case could not be judged: the inputs could not be
	// generated, the case needs more memory than the budget
	// (Options.MaxMemory), the executor could not prepare the program, the
	// run timed out, was cancelled or never started (ErrNotRun), or the
	// oracle failed without an //rx:expect-error.
	StatusError Status = "error"
	// StatusSkip: the executor does not serve the function (an external
	// executor's Run returned an error wrapping executor.ErrUnserved); Message
	// gives its reason. A skipped case is neither a pass nor a failure.
	StatusSkip Status = "skip"
	// StatusXFail: the case failed in a way an entry of the
	// known-discrepancy ledger documents (see package ledger); it does
	// not fail the run. Set by the caller of Run (rxeq run), not by Run.
	StatusXFail Status = "xfail"
	// StatusXPass: the case passed although a ledger entry expects it to
	// fail (its discrepancy no longer reproduces); it fails the run only
	// under `rxeq run --strict`.
	StatusXPass Status = "xpass"
)

// Shard selects a deterministic part of the cases: the groups of cases
// (scenario, function, batch) are numbered in matrix order from 0 and group
// g belongs to shard g mod Total + 1, so Total jobs with Index 1…Total run
// every case exactly once. The zero value (Total 0) selects everything.
type Shard struct {
	Index int // 1-based
	Total int
}

// ParseShard reads "i/n" (1 ≤ i ≤ n), as in `rxeq run --shard 2/4`.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%w: shard %q: want i/n, like 2/4", ErrOptions, s)
	}
	sh := Shard{Index: i, Total: n}
	return sh, sh.validate()
}

func (s Shard) validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Total < 1 || s.Index < 1 || s.Index > s.Total {
		return fmt.Errorf("%w: shard %d/%d: want 1 <= i <= n", ErrOptions, s.Index, s.Total)
	}
	return nil
}

// String prints "i/n", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Total == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Total)
}

func (s Shard) has(group int) bool {
	return s.Total <= 1 || group%s.Total == s.Index-1
}

// Options configure a Run. The zero value runs the oracle, the fallback
// interpreter and the forced native backend on every function and batch
// of every scenario, NumCPU groups at a time.
type Options struct {
	// Reference is the executor every other one is compared with; default
	// the oracle (oracle.Executor). It always runs; it is reported as a
	// case of its own unless Backends leaves it out.
	Reference executor.Executor
	// Executors are compared with the reference. When nil, the runner
	// takes builtin.Select's defaults under builtin.Config{}.FromEnv:
	// fallback, forced native and, when libtorch is installed, torch
	// (Result.Unavailable says when it is not). To set the engines' knobs
	// (native's mode, compile timeout, torch threads, isolation, caches),
	// build a builtin.Config, Select with it and pass the Selection's
	// Executors and Unavailable here. Names must be unique.
	Executors []executor.Executor
	// Unavailable, with Executors, names executors the caller left out
	// because this machine cannot run them (builtin.Selection.Unavailable).
	// They are reported in Result.Unavailable, and a Backends entry naming
	// one is an error that gives the reason. When Executors is nil the
	// runner works this out itself.
	Unavailable []executor.Unavailable
	// Backends, when not empty, keeps only the cases of the executors with
	// these names ("oracle", "fallback", "native", "torch"). An unknown
	// name is an error, and so is one of Unavailable ("torch" when
	// libtorch is missing: the message names the Debian package
	// libtorch-dev; "native" or "torch" in a build without cgo). The
	// reference runs either way.
	Backends []executor.Name
	// Batches, when not empty, replaces every scenario's //rx:batches.
	Batches []int
	// Seed, when not nil, replaces every scenario's //rx:seed.
	Seed *uint64
	// Dims binds symbolic dimensions other than the batch symbol, by name
	// (see GenerateInputs). Unbound ones make the case an error.
	Dims map[string]int
	// Inputs, when not "", is a directory of .npy files that replace the
	// generated inputs, so that a production batch (or a --dump of an
	// earlier run) can be replayed. For each parameter of each function,
	// the first file of InputSearchPaths that exists is read: a dump's
	// DIR/SCENARIO/FUNCTION/bN/inputs/PARAM.npy (one group per bN), then
	// DIR/SCENARIO/FUNCTION/PARAM.npy, DIR/FUNCTION/PARAM.npy and
	// DIR/PARAM.npy. A float32 parameter needs a C-order little-endian
	// float32 array ('<f4') of its declared rank whose fixed dimensions
	// match; an int64 scalar needs an '<i8' array of shape (). The batch
	// size, and every other symbolic dimension, comes from the data: all
	// files of a group must agree (and agree with the bN of a dump
	// directory and with Dims). NaN and infinities in the data are kept
	// and compared as in any other run.
	//
	// A parameter without a file is generated from its //rx:input, at the
	// batch the other files give, and Result.Replays says so; a function
	// without any file runs on generated inputs at its usual batches. All
	// files are read and checked before any case runs: a missing
	// directory, no file for any function, a file that cannot be read, is
	// corrupt or truncated, Fortran order, big-endian, the wrong dtype or
	// a shape that disagrees is an error wrapping ErrInputs and
	// ErrOptions that names the file and says how to fix it. With Inputs,
	// Batches selects which of the data's batches run (a function whose
	// files give none of them is an ErrOptions error), and still replaces
	// //rx:batches where no file fixes the batch.
	Inputs string
	// Shard selects part of the cases; the zero value selects all.
	Shard Shard
	// Parallel bounds how many case groups run at once; default
	// runtime.NumCPU().
	Parallel int
	// CaseTimeout bounds one executor's run of one case; default
	// DefaultCaseTimeout; negative means no timeout. It does not bound
	// the start (or restart) of the process an executor runs in, nor
	// preparing the program there again (executor.Readier): the executor's
	// own start timeout bounds that, before the case's clock starts.
	CaseTimeout time.Duration
	// MaxMemory is the memory budget of the run, in bytes: before a group
	// (scenario, function, batch) generates its inputs, EstimateMemory
	// bounds what it needs through every executor that runs it; a group
	// needing more than MaxMemory is not run, and each of its cases is a
	// StatusError whose message (wrapping ErrMemory) says what it needs and
	// how to raise the budget; the other groups run. Groups running at once
	// share the budget: a group waits until its estimate fits beside the
	// others'. 0 means DefaultMaxMemory(); negative means no budget.
	MaxMemory int64
	// Tolerance is the float tolerance of outputs without an
	// //rx:tolerance; default DefaultTolerance().
	Tolerance *compare.Tolerance
	// MaxULP, when positive, is a bound in float32 units in the last
	// place that every float output must also meet, element by element,
	// against the oracle rounded to float32 (besides its rtol/atol), as
	// if its //rx:tolerance said ulp=MaxULP; an output whose directive
	// gives its own ulp= keeps it. 0: no ULP bound beyond the directives'.
	MaxULP int64
	// ErrorKinds compares runtime errors by kind only (division by zero,
	// a wrong shape or dtype: the ir.Err* kinds, compare.ErrorKinds), not
	// by rxeq's exact text: for production code that reports the same
	// failures in its own words. The oracle failing and the executor
	// succeeding, or the reverse, still fails the case.
	ErrorKinds bool
	// ULPBase names the executor the others' float outputs are measured
	// against in ULPs (reported, not judged); default "fallback". If it is
	// not among the executors no ULP metrics are reported.
	ULPBase executor.Name
	// SkipLocks turns the source lock off.
	SkipLocks bool
	// Progress, when not nil, is called after each group of cases finishes
	// (from the runner's goroutines, one call at a time) with the number of
	// groups done and the total.
	Progress func(done, total int, cases []Case)
	// Tensors, when not nil, receives the inputs and every executor's
	// outputs of each group once it is judged (for `rxeq run --dump`). It
	// is called from the runner's goroutines, possibly at once for several
	// groups; the tensors are the runner's own and must not be modified.
	Tensors func(GroupTensors)
}

// GroupTensors are the tensors of one (scenario, function, batch) group.
type GroupTensors struct {
	Scenario string
	Function string
	Batch    int
	Inputs   map[string]*tensor.Tensor            // by parameter name, as generated
	Outputs  map[string]map[string]*tensor.Tensor // by executor, then result name
	Errors   map[string]string                    // by executor, when it returned an error
}

// DefaultCaseTimeout is the per-case timeout when Options.CaseTimeout is 0.
const DefaultCaseTimeout = 2 * time.Minute

// DefaultScenarioSeed is the seed of a scenario without //rx:seed.
const DefaultScenarioSeed = 1

// DefaultBatch is the one batch of a scenario without //rx:batches.
const DefaultBatch = 1

// Timing splits the time of one case.
type Timing struct {
	// Prepare is the executor's preparation of the scenario's program
	// (code generation, C compile or cache lookup, loading). A program is
	// prepared once per (scenario, executor); the time is charged to the
	// first case of that pair in result order and is 0 on the others, so
	// sums over cases are exact.
	Prepare time.Duration
	// Inputs is the generation of the group's inputs, charged the same way
	// to the group's first case. Files of Options.Inputs are read before
	// the run starts and are not counted.
	Inputs time.Duration
	// Execute is the executor's Run.
	Execute time.Duration
	// Compare is the comparison with the reference (outputs, classes,
	// errors, ULPs and input digests).
	Compare time.Duration
}

// Total returns the sum of the parts.
func (t Timing) Total() time.Duration { return t.Prepare + t.Inputs + t.Execute + t.Compare }

// InputDigest is the SHA-256 of one input (name, dtype, shape and data
// bytes, little-endian), before the run and after it.
type InputDigest struct {
	Name   string
	Before string // hex
	After  string // hex; "" when the run did not finish
	// Source is the .npy file the input was read from (Options.Inputs),
	// or "" when it was generated.
	Source string
}

// Case is the result of one executor on one (scenario, function, batch).
type Case struct {
	Scenario string // //rx:scenario, or the file's base name without .rx
	File     string
	Function string
	Batch    int
	Seed     uint64 // the scenario seed the inputs were derived from
	Executor executor.Name
	Path     executor.Name // what ran: "oracle", "fallback", "native", …
	Status   Status
	Timing   Timing
	// Group is the number of the case's group (scenario, function,
	// batch) in the matrix order of the whole run, from 0, the same in
	// every shard: the group belongs to shard Group mod Total + 1, and
	// sorting a merge's cases by it restores the unsharded order.
	Group int
	// Check is "" for the comparison with the reference, "invariance" for
	// the executor's position and batch invariance (CheckInvariance).
	Check string

	// Outputs compares every output with the reference, in the function's
	// result order (empty for the reference itself).
	Outputs []compare.OutputMetrics
	// ULP measures every output against the ULPBase executor (reported,
	// not judged); empty for the reference and the base itself.
	ULP []compare.ULPMetrics
	// Tolerances are the tolerances the float outputs were judged with.
	Tolerances map[string]compare.Tolerance
	Inputs     []InputDigest

	// Twin is the executor this one's outputs and errors were also
	// compared with bit for bit (executor.Twin: native for native-avx2),
	// "" when it has none or that one did not run.
	Twin executor.Name

	// Blame, for a case that failed on its outputs, says whether float32
	// explains the mismatch (BlameFloat32) or the executor disagrees
	// (BlameExecutor); "" otherwise.
	Blame Blame

	// Error is the executor's own error text, "" if it succeeded.
	Error string
	// Message explains a fail or an error: every mismatch report, the error
	// disagreement, the modified input; "" on pass.
	Message string
}

// Name returns "scenario/function/bBATCH/executor" (and "/invariance"
// for an invariance case).
func (c Case) Name() string {
	if c.Check != "" {
		return fmt.Sprintf("%s/%s/b%d/%s/%s", c.Scenario, c.Function, c.Batch, c.Executor, c.Check)
	}
	return fmt.Sprintf("%s/%s/b%d/%s", c.Scenario, c.Function, c.Batch, c.Executor)
}

// LockCase is the source lock of one function.
type LockCase struct {
	Scenario string
	File     string
	Function string
	// Group is the number of the function's first group (Case.Group),
	// whose shard checks the lock.
	Group int
	// Error is set when no C could be generated to check (the result then
	// fails); Result is zero.
	Error  string
	Result lock.Result
	// Duration is the time of the check, and of generating the file's C
	// for the first lock of each file (generated once per file).
	Duration time.Duration
}

// OK reports whether the lock holds.
func (l LockCase) OK() bool { return l.Error == "" && l.Result.OK }

// Preparation records one executor's preparation of one scenario.
type Preparation struct {
	Scenario string
	Executor executor.Name
	Duration time.Duration
	Error    string
	// Compiler and Library describe a native build ("" for other
	// executors); Cached says whether the library came from the cache.
	Compiler string
	Library  string
	Cached   bool
	// Framework is the version of the framework behind a torch build
	// ("libtorch 1.13.0 (…)"), or what an executor.FrameworkReporter
	// says ("numpy 1.24.2, python 3.11.2, torch 1.13.0"); "" otherwise.
	Framework string
}

// Result is the outcome of a Run: every case in matrix order (scenario,
// function, batch, then the reference followed by Options.Executors), the
// lock results in (scenario, function) order, and the preparations.
type Result struct {
	Cases        []Case
	Locks        []LockCase
	Preparations []Preparation
	Shard        Shard
	// Groups is the number of groups (scenario × function × batch) of
	// the whole run, every shard's: what a merge of the shards must
	// cover.
	Groups int
	Wall   time.Duration
	// Unavailable lists default executors that could not run on this
	// machine (torch without libtorch; native and torch in a build
	// without cgo), with the reason.
	Unavailable []executor.Unavailable
	// Replays, when Options.Inputs is set, says for every group in matrix
	// order which inputs were read from which file and which were
	// generated.
	Replays []Replay
}

// OK reports whether every case passed (or was skipped) and every lock
// held.
func (r *Result) OK() bool {
	for _, c := range r.Cases {
		switch c.Status {
		case StatusPass, StatusSkip, StatusXFail, StatusXPass:
		default:
			return false
		}
	}
	for _, l := range r.Locks {
		if !l.OK() {
			return false
		}
	}
	return true
}

// Counts returns how many cases passed, failed and errored (skipped,
// xfail and xpass cases are in none of them; see Skipped and Expected).
func (r *Result) Counts() (pass, fail, errored int) {
	for _, c := range r.Cases {
		switch c.Status {
		case StatusPass:
			pass++
		case StatusFail:
			fail++
		case StatusSkip, StatusXFail, StatusXPass:
		default:
			errored++
		}
	}
	return pass, fail, errored
}

// Expected returns how many cases are xfail and xpass (see StatusXFail);
// they are in none of Counts' numbers.
func (r *Result) Expected() (xfail, xpass int) {
	for _, c := range r.Cases {
		switch c.Status {
		case StatusXFail:
			xfail++
		case StatusXPass:
			xpass++
		}
	}
	return xfail, xpass
}

// Skipped returns how many cases were skipped.
func (r *Result) Skipped() int {
	n := 0
	for _, c := range r.Cases {
		if c.Status == StatusSkip {
			n++
		}
	}
	return n
}

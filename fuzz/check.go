package fuzz

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// ErrProgram is the kind of the error Check returns for a source that does
// not check (program.Parse fails) or cannot be lowered: a generator or
// reducer bug, or a bad reproducer, never a disagreement.
var ErrProgram = errors.New("program does not check")

// DefaultTolerance is the float tolerance of Check: the harness's
// catalog default (compare.DefaultTolerance: rtol 1e-4, atol 3e-6), so a
// generated program is held to what a user's program is. Random programs
// compound float32 rounding in ways hand-written ones do not; the noise
// runs (see Checker.Check) tell that apart from a bug element by
// element, so the tolerance need not be loosened for it. Measured: on
// 20 000 programs of up to 4 functions of 12 statements, nested 3 deep,
// fallback and oracle disagreed on none and 3 elements were excused;
// against the looser rtol 1e-3, atol 1e-4 used before, a Tanh off by 1e-3
// above 2 is caught in 368 of the first 1000 programs instead of 88.
// //rx:tolerance directives override it per output.
func DefaultTolerance() compare.Tolerance { return compare.DefaultTolerance() }

// Kind classifies a Finding.
type Kind string

// The kinds of findings.
const (
	// KindMismatch: both ran, an output differs beyond tolerance (or a
	// NaN/Inf disagreement, or a class flip).
	KindMismatch Kind = "mismatch"
	// KindProblem: an output is missing, extra, or of the wrong dtype or
	// shape.
	KindProblem Kind = "problem"
	// KindError: the errors disagree: one failed and the other did not, or
	// both failed with different kinds or texts.
	KindError Kind = "error"
	// KindReference: the reference failed in a way a checked program never
	// should (an internal error, a panic).
	KindReference Kind = "reference"
	// KindPrepare: the executor could not prepare the program.
	KindPrepare Kind = "prepare"
	// KindPanic: the executor panicked.
	KindPanic Kind = "panic"
	// KindPosition: an executor's result for a row or an element depends
	// on where it sits (see Checker.Invariance).
	KindPosition Kind = "position"
	// KindRoundTrip: the ONNX round trip of a function (Checker.RoundTrip)
	// failed: the export or the import refused it or panicked, or what
	// came back does not check or lacks a parameter or a result. (A
	// difference in what the imported program computes is a KindMismatch,
	// KindProblem or KindError of executor RoundTripName.)
	KindRoundTrip Kind = "round-trip"
)

// Finding is one disagreement between the reference and an executor.
type Finding struct {
	Kind      Kind
	Reference executor.Name // the reference executor's name ("oracle")
	Executor  executor.Name // the disagreeing executor's name
	Func      string        // "" for KindPrepare
	Batch     int           // 0 for KindPrepare
	Output    string        // KindMismatch, KindProblem: the output
	// RefError and GotError are the errors' texts ("" when none), and
	// RefKind and GotKind their kinds ("division by zero", "unclassified",
	// "" when none), for KindError and KindReference.
	RefError, GotError string
	RefKind, GotKind   string
	// Crashed says an error of the finding (the executor's, or the
	// reference's) is a crash or a timeout of the process the run was in:
	// it wraps executor.ErrCrashed or executor.ErrTimedOut. It is decided
	// from the errors when the finding is made, never from their texts, and
	// chooses how the finding is reduced (ReduceChecker). It is not part
	// of the Signature: the error kinds already tell a crash apart.
	Crashed bool
	// Values is the value class of a KindMismatch (ValNaN, ValOppositeInf,
	// …: what the reference and the executor hold where they disagree),
	// Shape the shape class of the output (shapeClass). Neither is part
	// of the Signature.
	Values, Shape string
	Detail        string // the human-readable report
	// Framework is what the executor's prepared program said runs it
	// (executor.FrameworkOf: "ONNX Runtime 1.30.0, …", "numpy 1.24.2,
	// python 3.11.2, torch 1.13.0"), "" when it said nothing. It is not
	// part of the Signature; the ledger's version ranges are matched
	// against the version in it.
	Framework string
}

// String summarises the finding on one line.
func (f Finding) String() string {
	where := f.Func
	if f.Batch > 0 {
		where += fmt.Sprintf(" batch %d", f.Batch)
	}
	if where == "" {
		return fmt.Sprintf("%s vs %s: %s: %s", f.Executor, f.Reference, f.Kind, f.Detail)
	}
	return fmt.Sprintf("%s vs %s: %s in %s: %s", f.Executor, f.Reference, f.Kind, where, f.Detail)
}

// Signature is what "fails the same way" means to the reducer: the same
// kind, executors, function and output (for value disagreements) or the
// same error kinds (for error disagreements). The batch and the numbers
// may change while a program shrinks.
type Signature struct {
	Kind               Kind
	Reference          executor.Name
	Executor           executor.Name
	Func               string
	Output             string
	RefKind, GotKind   string
	PanicOrPrepareText string // the panic's or preparation error's stable text (see Finding.Signature)
}

// Signature returns the finding's signature. For a panic or a failed
// preparation it keeps the text that does not change while the program
// shrinks: a C compiler's first "error: " diagnostic without its
// location, else the first line, with paths and numbers replaced by PATH
// and N.
func (f Finding) Signature() Signature {
	s := Signature{Kind: f.Kind, Reference: f.Reference, Executor: f.Executor, Func: f.Func}
	switch f.Kind {
	case KindMismatch, KindProblem:
		s.Output = f.Output
	case KindError, KindReference:
		s.RefKind, s.GotKind = f.RefKind, f.GotKind
	case KindPanic, KindPrepare, KindRoundTrip:
		s.PanicOrPrepareText = stableText(f.Detail)
	}
	return s
}

var (
	pathPattern   = regexp.MustCompile(`(/[^\s:"'/]+)+/?`)
	numberPattern = regexp.MustCompile(`[0-9]+`)
	// diagnosticPattern is a C compiler's "file:line:col: error: text".
	diagnosticPattern = regexp.MustCompile(`(?m):[0-9]+:[0-9]+: (error: .*)$`)
)

// stableText is the part of a preparation error or a panic that stays the
// same while its program shrinks: the C compiler's first diagnostic
// without its file:line:col (or else the first line), with paths and
// numbers blotted out ("index out of range [N] with length N"; a
// generated file's path names a fresh directory on every build).
func stableText(detail string) string {
	line, _, _ := strings.Cut(detail, "\n")
	if m := diagnosticPattern.FindStringSubmatch(detail); m != nil {
		line = m[1]
	}
	line = pathPattern.ReplaceAllString(line, "PATH")
	return numberPattern.ReplaceAllString(line, "N")
}

// Report is the result of checking one program.
type Report struct {
	Findings []Finding
	Runs     int // executor runs, the reference's included (noise runs not)
	// Excused counts the output elements that differed beyond the
	// tolerance but that float32 rounding explains (see Checker.Check),
	// over all executors, functions and batches.
	Excused int
	// Frameworks holds, per executor that prepared, what it said runs it
	// (executor.FrameworkOf), when it said something.
	Frameworks map[executor.Name]string
}

// OK reports whether every executor agreed with the reference.
func (r *Report) OK() bool { return len(r.Findings) == 0 }

// Has reports whether some finding has signature s.
func (r *Report) Has(s Signature) bool {
	for _, f := range r.Findings {
		if f.Signature() == s {
			return true
		}
	}
	return false
}

// Checker runs programs through a reference and other executors and
// compares them. The zero value compares the oracle with the fallback
// interpreter.
type Checker struct {
	// Reference is the executor the others are compared with; default
	// oracle.Executor.
	Reference executor.Executor
	// Executors are compared with the reference; default the fallback
	// interpreter alone.
	Executors []executor.Executor
	// Tolerance is the float tolerance of outputs without //rx:tolerance;
	// default DefaultTolerance.
	Tolerance *compare.Tolerance
	// Batches, when not empty, replaces the program's //rx:batches.
	Batches []int
	// NoiseRuns is how many times a function whose output disagrees runs
	// again through the oracle with rounding to float32 (once to nearest,
	// oracle.Options.Nearest, then stochastically, oracle.Options.Noise)
	// to see whether rounding explains the disagreement; 0 means
	// DefaultNoiseRuns, a negative number none. See Check.
	NoiseRuns int
	// MaxMemory is the memory budget of one (function, batch) in bytes,
	// checked before its inputs are generated: harness.EstimateMemory
	// over the reference, the executors and one more oracle per noise run
	// must fit, else Check returns an error wrapping harness.ErrMemory.
	// 0 means harness.DefaultMaxMemory(); negative means no budget.
	MaxMemory int64
	// Metamorphic is how many equivalent variants of a program (Variants)
	// each executor, the reference included, also runs when the program
	// raised no finding; an executor whose outputs for a variant differ
	// from its own outputs for the program, bit for bit, is a finding of
	// KindMetamorphic. 0 runs none.
	Metamorphic int
	// SignedZeros compares the sign of zeros (compare.Tolerance.SignedZeros)
	// in every output, as //rx:signed-zeros does in one file.
	SignedZeros bool
	// Invariance checks every executor, the reference included, against
	// itself for position and batch invariance (CheckInvariance) when the
	// program raised no other finding.
	Invariance bool
	// RotateTwins runs, of the executors that must give the bits of
	// another executor in Executors (executor.Twin: native-avx2,
	// native-sse2, native-c and native-tiled with native), one per
	// program, in turn by the program's //rx:seed, so that a campaign
	// covers every variant at the cost of one. Without it every program
	// runs through all of them.
	RotateTwins bool
	// RoundTrip, when not nil, sends every function of a program through
	// an ONNX round trip (ONNXTrip: onnx.Export, then onnx.Import of the
	// model) and runs the program it gives back under the oracle on the
	// same inputs, at every batch: its outputs must hold the bits of the
	// oracle's outputs for the function itself (NaN payloads aside) and
	// its errors the same kind, function, builtin and operands. Any
	// difference, and any failure of the export or the import, is a
	// finding of executor RoundTripName (category CatRoundTrip), listed
	// after the executors' findings. A function with a form the import
	// refuses by design (an int64 tensor parameter, a second symbolic
	// dimension: neither is a scenario, and the generator writes neither)
	// is not round-tripped. It is a function rather than a switch so that
	// a test can hand in a broken round trip and see it caught; package
	// fuzz depends on package onnx either way (through executor/builtin).
	// `rxeq fuzz` sets ONNXTrip unless --roundtrip=false.
	RoundTrip Trip
	// ReferenceOnly compares no executor with the reference (Executors is
	// not used, and no fallback is chosen in its place): a program is
	// checked by the round trip (RoundTrip) and the reference's own
	// invariance (Invariance) and variants (Metamorphic) alone. `rxeq
	// fuzz --executors oracle` sets it, and so does the reduction of a
	// round-trip finding.
	ReferenceOnly bool
	// invarianceOf, when not empty, checks the invariance of this one
	// executor alone (the reduction of its position finding, Checker.reducing),
	// not the reference's nor another's.
	invarianceOf executor.Name
}

// namedOnly returns, of execs and their preps, those of the executor
// named name (Checker.only, by contrast, narrows a checker).
func namedOnly(name executor.Name, execs []executor.Executor, preps []executor.Prepared) ([]executor.Executor, []executor.Prepared) {
	for i, e := range execs {
		if e.Name() == name {
			return execs[i : i+1], preps[i : i+1]
		}
	}
	return nil, nil
}

// executorsFor returns the executors of c that check a program whose
// //rx:seed is seed: all of execs, or with RotateTwins one of the
// variants whose twin is in execs (executor.Twin) and the others.
func (c *Checker) executorsFor(execs []executor.Executor, seed uint64) []executor.Executor {
	runs := c.runsFor(execs, seed)
	var out []executor.Executor
	for i, e := range execs {
		if runs[i] {
			out = append(out, e)
		}
	}
	return out
}

// runsFor says which of execs check a program whose //rx:seed is seed
// (executorsFor).
func (c *Checker) runsFor(execs []executor.Executor, seed uint64) []bool {
	runs := make([]bool, len(execs))
	var variants []int
	for i, e := range execs {
		runs[i] = true
		if t := executor.TwinOf(e); c.RotateTwins && t != "" && slices.ContainsFunc(execs, func(o executor.Executor) bool { return o.Name() == t }) {
			variants = append(variants, i)
		}
	}
	if len(variants) < 2 {
		return runs
	}
	for k, i := range variants {
		runs[i] = uint64(k) == seed%uint64(len(variants))
	}
	return runs
}

// Check compares the oracle with the fallback interpreter on src (see
// Checker.Check); more executors may be listed.
func Check(ctx context.Context, src []byte, executors ...executor.Executor) (*Report, error) {
	c := Checker{Executors: executors}
	return c.Check(ctx, src)
}

// Check parses src and runs every function at every batch through the
// reference and each executor, on the same inputs (harness.GenerateInputs:
// the //rx:input distributions, seeded from //rx:seed and the case name;
// the batch binds the symbolic dimension), and compares as the harness
// does: float outputs within tolerance with NaN positions and Inf signs
// equal, int64 outputs exactly except argmax near-ties (an int64 result
// assigned only Argmax(R, axis) of a float result R is compared with
// compare.Classes against the reference's R), and errors of the
// same kind and text.
//
// Random programs are sometimes ill-conditioned in float32 even though
// their magnitudes are bounded: a loop that feeds a Tanh of a MatMul back
// into itself, or sums a row and broadcasts it back, multiplies rounding
// error with every trip; LogSoftmax of a lane with one dominant value
// rounds log(1 + 1e-8) to 0; a product of tiny values underflows to 0 and
// then meets an infinity. None of that is a bug, and a fixed tolerance
// cannot tell it from one. So when an executor's output disagrees at the
// plain tolerance, the function is run again, once per batch, through the
// exact oracle and NoiseRuns times with every intermediate value rounded
// to float32: once to nearest, then stochastically (Monte Carlo
// arithmetic; the former reaches a Minimum that flips only when a sum
// rounds down, the latter error growth that no single rounding shows).
// An element of that output is excused when both the reference's and the
// executor's values are plausible float32 results: a NaN or infinity
// that some of those runs produced, or a finite value within the range of
// their finite results stretched by the tolerance plus NoiseFactor times
// the range's width. Where the computation is well-conditioned the runs
// agree to a few ulps, so a wrong kernel, a wrong constant or a lost
// store is still judged at the plain tolerance; and the range is centred
// on the oracle's own runs, so a wrong reference is not excused either.
// Report.Excused counts the elements this let pass.
//
// The error is non-nil only when src does not check (ErrProgram), an
// executor serves its own functions by name (executor.ErrByName: it would
// run its fixed code whatever program it is given, so nothing it answers
// says anything about src), a
// batch is above harness.MaxBatch, a function at a batch needs more memory
// than MaxMemory (harness.ErrMemory), the inputs cannot be generated, or
// ctx ends; disagreements are in the Report.
func (c *Checker) Check(ctx context.Context, src []byte) (*Report, error) {
	f, err := program.Parse("fuzz.rx", src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProgram, err)
	}
	p, err := program.Lower(f)
	if err != nil {
		return nil, fmt.Errorf("%w: lowering: %w", ErrProgram, err)
	}
	ref := c.Reference
	if ref == nil {
		ref = builtin.Reference()
	}
	execs := c.Executors
	if c.ReferenceOnly {
		execs = nil
	} else if len(execs) == 0 {
		sel, err := builtin.Select([]executor.Name{executor.Fallback}, builtin.Config{}, nil)
		if err != nil {
			return nil, err
		}
		execs = sel.Executors
	}
	tol := DefaultTolerance()
	if c.Tolerance != nil {
		tol = *c.Tolerance
	}
	if c.SignedZeros {
		tol.SignedZeros = true
	}
	batches := c.Batches
	if len(batches) == 0 {
		batches = f.Batches
	}
	if len(batches) == 0 {
		batches = []int{1}
	}
	for _, b := range batches {
		if b <= 0 || b > harness.MaxBatch {
			return nil, fmt.Errorf("%w: batch %d: want 1 to %d", harness.ErrOptions, b, harness.MaxBatch)
		}
	}
	limit := c.MaxMemory
	if limit == 0 {
		limit = harness.DefaultMaxMemory()
	}
	sizedRef := ref
	if _, exact := ref.(oracle.Executor); exact {
		sizedRef = checkOracle{} // Check runs no blame; its noise runs are counted below
	}
	sized := append([]executor.Executor{sizedRef}, execs...)
	for range c.noiseRuns() {
		sized = append(sized, noiseOracle{})
	}
	if c.RoundTrip != nil {
		sized = append(sized, checkOracle{}) // the imported program's run
	}
	_, exact := ref.(oracle.Executor) // the reference's outputs are the oracle's (the round trip's want)
	seed := uint64(harness.DefaultScenarioSeed)
	if f.HasSeed {
		seed = f.Seed
	}
	execs = c.executorsFor(execs, seed)

	rep := &Report{}
	refPrep, err := executor.SafePrepare(ctx, ref, f, p)
	if err != nil {
		rep.Findings = append(rep.Findings, Finding{Kind: KindPrepare, Reference: ref.Name(), Executor: ref.Name(), Crashed: crashed(err), Detail: err.Error()})
		return rep, nil
	}
	defer refPrep.Close()
	preps := make([]executor.Prepared, len(execs))
	for i, e := range execs {
		pp, err := executor.SafePrepare(ctx, e, f, p)
		if err != nil {
			rep.Findings = append(rep.Findings, Finding{Kind: KindPrepare, Reference: ref.Name(), Executor: e.Name(), Crashed: crashed(err), Detail: err.Error()})
			continue
		}
		defer pp.Close()
		preps[i] = pp
		if fw := executor.FrameworkOf(pp); fw != "" {
			if rep.Frameworks == nil {
				rep.Frameworks = map[executor.Name]string{}
			}
			rep.Frameworks[e.Name()] = fw
		}
		if names := executor.ServedByName(pp); names != nil {
			return nil, byNameError(e.Name(), names)
		}
	}
	var tripFound []Finding // the round trip's findings, listed after the others
	// bases are the runs at the largest batch, from which the invariance
	// check starts (it runs the same inputs, generated again).
	bases := map[baseKey]execResult{}
	maxBatch := slices.Max(batches)
	for _, fn := range f.Funcs {
		classes := compare.ClassSources(fn)
		var trip *tripped
		if c.RoundTrip != nil {
			var tf *Finding
			if trip, tf = c.roundTrip(p, fn, ref.Name()); tf != nil {
				tripFound = append(tripFound, *tf)
			}
		}
		for _, batch := range batches {
			if err := harness.CheckMemory(harness.EstimateMemory(fn, p.Func(fn.Name), batch, nil, sized), limit); err != nil {
				return nil, err
			}
			inputs, err := harness.GenerateInputs(f, fn, batch, seed, nil)
			if err != nil {
				return nil, err
			}
			want, wantErr := safeRun(ctx, refPrep, fn.Name, inputs)
			rep.Runs++
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if wantErr != nil && !isRuntimeError(wantErr) {
				rep.Findings = append(rep.Findings, Finding{Kind: KindReference, Reference: ref.Name(), Executor: ref.Name(),
					Func: fn.Name, Batch: batch, RefError: wantErr.Error(), RefKind: errorKind(wantErr), Crashed: crashed(wantErr), Detail: wantErr.Error()})
				continue
			}
			if trip != nil {
				tw, twErr := want, wantErr
				if !exact {
					tw, twErr = oracle.Run(ctx, fn, tensor.CloneMap(inputs))
				}
				found, err := trip.check(ctx, fn, batch, inputs, tw, twErr)
				if err != nil {
					return nil, err
				}
				tripFound = append(tripFound, found...)
			}
			// The noise runs are made once per function and batch, and only
			// when an executor's outputs disagree at the plain tolerance.
			var noise samples
			probed := false
			runs := make([]execResult, len(execs))
			for i := range execs {
				if preps[i] == nil {
					continue
				}
				got, gotErr := safeRun(ctx, preps[i], fn.Name, inputs)
				rep.Runs++
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				runs[i] = execResult{ran: true, out: got, err: gotErr}
			}
			if batch == maxBatch && c.Invariance {
				bases[baseKey{fn.Name, ref.Name()}] = execResult{ran: true, out: tensor.CloneMap(want), err: wantErr}
				for i, e := range execs {
					if runs[i].ran {
						bases[baseKey{fn.Name, e.Name()}] = execResult{ran: true, out: tensor.CloneMap(runs[i].out), err: runs[i].err}
					}
				}
			}
			for i, e := range execs {
				got, gotErr := runs[i].out, runs[i].err
				if !runs[i].ran || errors.Is(gotErr, executor.ErrUnserved) {
					continue // not prepared, or an external executor that does not serve fn: nothing to compare
				}
				if t := twinRun(execs, runs, i); t != nil {
					// A variant that must give its twin's bits is held
					// to them alone: the twin is compared with the
					// reference already.
					if ok, msg := compare.Bits(string(e.Name()), string(t.name), t.out, t.err, got, gotErr); !ok {
						rep.Findings = append(rep.Findings, twinFinding(t, e.Name(), fn, batch, got, gotErr, msg))
					}
					continue
				}
				base := Finding{Reference: ref.Name(), Executor: e.Name(), Func: fn.Name, Batch: batch}
				tols := compare.TolerancesFor(f, fn, tol, string(e.Name()))
				found := compareRun(base, fn, want, wantErr, got, gotErr, tols, classes)
				if mismatched := mismatchedOutputs(found); len(mismatched) > 0 && c.noiseRuns() > 0 {
					if !probed {
						if noise, err = probe(ctx, fn, inputs, noiseSeed(seed, fn.Name, batch), c.noiseRuns()); err != nil {
							return nil, err
						}
						probed = true
					}
					// Judge the outputs that failed again, without what
					// float32 rounding noise explains. Classes taken from
					// scores that are relaxed are relaxed with them: the
					// near-tie rule judges them against those scores, so a
					// class that agreed with the exact scores (a tie of
					// equal 1s) must be judged against the rounded ones
					// too (where the float32 run's NaN picks its index).
					for name, src := range classes {
						if mismatched[src.Scores] {
							mismatched[name] = true
						}
					}
					relaxed, excused := noise.relax(got, want, tols, mismatched)
					found = compareRun(base, fn, relaxed, wantErr, got, gotErr, tols, classes)
					rep.Excused += excused
				}
				rep.Findings = append(rep.Findings, found...)
			}
		}
	}
	// A variant whose twin ran is checked against the twin's bits alone:
	// the twin's own invariance and variants cover the program.
	selfExecs, selfPreps := withoutTwins(execs, preps)
	if c.Invariance && rep.OK() {
		all := append([]executor.Executor{ref}, selfExecs...)
		allPreps := append([]executor.Prepared{refPrep}, selfPreps...)
		if c.invarianceOf != "" {
			all, allPreps = namedOnly(c.invarianceOf, all, allPreps)
		}
		found, runs, err := c.checkInvariance(ctx, f, p, all, allPreps, batches, seed, bases)
		rep.Runs += runs
		if err != nil {
			return nil, err
		}
		rep.Findings = append(rep.Findings, found...)
	}
	if c.Metamorphic > 0 && rep.OK() {
		vs, err := Variants(src, seed, c.Metamorphic)
		if err != nil {
			return nil, err
		}
		all := append([]executor.Executor{ref}, selfExecs...)
		allPreps := append([]executor.Prepared{refPrep}, selfPreps...)
		found, runs, err := c.checkVariants(ctx, f, all, allPreps, vs, batches, seed)
		rep.Runs += runs
		if err != nil {
			return nil, err
		}
		rep.Findings = append(rep.Findings, found...)
	}
	rep.Findings = append(rep.Findings, tripFound...)
	for i := range rep.Findings {
		rep.Findings[i].Framework = rep.Frameworks[rep.Findings[i].Executor]
	}
	return rep, nil
}

// withoutTwins returns execs and their preps without the variants whose
// twin is among execs and prepared (executor.Twin).
func withoutTwins(execs []executor.Executor, preps []executor.Prepared) ([]executor.Executor, []executor.Prepared) {
	var es []executor.Executor
	var ps []executor.Prepared
	for i, e := range execs {
		t := executor.TwinOf(e)
		j := slices.IndexFunc(execs, func(o executor.Executor) bool { return t != "" && o.Name() == t })
		if j >= 0 && preps[j] != nil {
			continue
		}
		es, ps = append(es, e), append(ps, preps[i])
	}
	return es, ps
}

// execResult is one executor's run of a function at a batch in Check.
// baseKey names the run of one function by one executor.
type baseKey struct {
	fn   string
	exec executor.Name
}

type execResult struct {
	ran bool
	out map[string]*tensor.Tensor
	err error
	// name is the executor's (set by twinRun).
	name executor.Name
}

// twinRun returns the run of the executor that execs[i] must equal bit
// for bit (executor.Twin), when that executor is in execs and ran this
// function (and served it); nil otherwise.
func twinRun(execs []executor.Executor, runs []execResult, i int) *execResult {
	twin := executor.TwinOf(execs[i])
	if twin == "" {
		return nil
	}
	for j, e := range execs {
		if j != i && e.Name() == twin && runs[j].ran && !errors.Is(runs[j].err, executor.ErrUnserved) {
			t := runs[j]
			t.name = twin
			return &t
		}
	}
	return nil
}

// twinFinding is the finding of a variant (executor name) whose run (got,
// gotErr) differs from its twin's t, as compare.Bits described it (msg):
// the twin is its Reference. A difference of outputs is a KindMismatch of
// the first output that differs, one of errors (or of one failing alone)
// a KindError.
func twinFinding(t *execResult, name executor.Name, fn *program.Func, batch int, got map[string]*tensor.Tensor, gotErr error, msg string) Finding {
	f := Finding{Reference: t.name, Executor: name, Func: fn.Name, Batch: batch, Detail: msg}
	var pe *panicError
	switch {
	case errors.As(gotErr, &pe):
		f.Kind, f.Detail = KindPanic, pe.Error()
	case t.err != nil || gotErr != nil:
		f.Kind = KindError
		f.RefKind, f.GotKind = errorKind(t.err), errorKind(gotErr)
		f.Crashed = crashed(t.err) || crashed(gotErr)
		if t.err != nil {
			f.RefError = t.err.Error()
		}
		if gotErr != nil {
			f.GotError = gotErr.Error()
		}
	default:
		f.Kind = KindMismatch
		for _, r := range fn.Results {
			if compare.BitDiff(got[r.Name], t.out[r.Name]) != "" {
				f.Output = r.Name
				if g := got[r.Name]; g != nil {
					f.Shape = shapeClass(g.Shape)
				}
				break
			}
		}
	}
	return f
}

// noiseOracle stands for one noise run (an oracle run rounding to
// float32) in the memory estimate of Check.
type noiseOracle struct{ oracle.Executor }

func (noiseOracle) Name() executor.Name { return "oracle noise run" }

// checkOracle is the reference oracle in the memory estimate of Check,
// which (unlike harness.Run) runs no float32-rounded oracle for a blame.
type checkOracle struct{ oracle.Executor }

// mismatchedOutputs names the outputs of KindMismatch findings.
func mismatchedOutputs(fs []Finding) map[string]bool {
	var out map[string]bool
	for _, f := range fs {
		if f.Kind == KindMismatch {
			if out == nil {
				out = map[string]bool{}
			}
			out[f.Output] = true
		}
	}
	return out
}

func (c *Checker) noiseRuns() int {
	if c.NoiseRuns == 0 {
		return DefaultNoiseRuns
	}
	return max(c.NoiseRuns, 0)
}

// compareRun compares one executor's run with the reference's, with the
// runner's judgement of errors (compare.Errors) and outputs
// (compare.Outputs): a finding per output that fails.
func compareRun(base Finding, fn *program.Func, want map[string]*tensor.Tensor, wantErr error,
	got map[string]*tensor.Tensor, gotErr error, tols map[string]compare.Tolerance, classes map[string]compare.ClassSource) []Finding {
	var pe *panicError
	if errors.As(gotErr, &pe) {
		base.Kind, base.Detail = KindPanic, pe.Error()
		return []Finding{base}
	}
	if wantErr != nil || gotErr != nil {
		if ok, msg := compare.Errors(wantErr, gotErr); !ok {
			base.Kind, base.Detail = KindError, msg
			base.RefKind, base.GotKind = errorKind(wantErr), errorKind(gotErr)
			base.Crashed = crashed(wantErr) || crashed(gotErr)
			if wantErr != nil {
				base.RefError = wantErr.Error()
			}
			if gotErr != nil {
				base.GotError = gotErr.Error()
			}
			return []Finding{base}
		}
		return nil
	}
	metrics, extra := compare.Outputs(fn, want, got, tols, classes)
	var out []Finding
	for _, m := range metrics {
		if m.OK {
			continue
		}
		f := base
		f.Kind, f.Output, f.Detail = KindMismatch, m.Name, m.Report
		if m.Problem != "" {
			f.Kind = KindProblem
		} else if g := got[m.Name]; g != nil {
			f.Values = valueClass(want[m.Name], g, tols[m.Name], tols[m.Name].SignedZeros)
			f.Shape = shapeClass(g.Shape)
		}
		out = append(out, f)
	}
	// A finding per output keeps each undeclared output's signature.
	for _, name := range extra {
		f := base
		f.Kind, f.Output, f.Detail = KindProblem, name, compare.Undeclared([]string{name})
		out = append(out, f)
	}
	return out
}

// isRuntimeError reports whether err is a program's runtime error (the
// same for every executor), as opposed to an internal failure.
func isRuntimeError(err error) bool {
	var re *ir.RuntimeError
	return errors.As(err, &re)
}

// errorKind names an error's kind: the Kind of its *ir.RuntimeError; for
// a crashed or timed-out run (crashed), the first line of its text
// ("native crashed: signal SIGSEGV", "native timed out after 10s"), so a
// reduction keeps a segfault a segfault rather than any failure; else
// "unclassified"; "" for nil.
func errorKind(err error) string {
	if err == nil {
		return ""
	}
	var re *ir.RuntimeError
	if errors.As(err, &re) && re.Kind != nil {
		return re.Kind.Error()
	}
	if crashed(err) {
		first, _, _ := strings.Cut(err.Error(), "\n")
		return first
	}
	return "unclassified"
}

// crashed reports whether err is a crash or a timeout of the process a
// run was in (a worker's, an external executor's).
func crashed(err error) bool {
	return errors.Is(err, executor.ErrCrashed) || errors.Is(err, executor.ErrTimedOut)
}

// panicError is a panic recovered from an executor.
type panicError struct{ msg string }

func (p *panicError) Error() string { return p.msg }

// safeRun runs fn on a private copy of the inputs, turning a panic into a
// *panicError.
func safeRun(ctx context.Context, p executor.Prepared, fn string, inputs map[string]*tensor.Tensor) (out map[string]*tensor.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &panicError{msg: fmt.Sprintf("panic: %v", r)}
		}
	}()
	o, err := p.Run(ctx, fn, tensor.CloneMap(inputs))
	return o.Outputs, err
}

// Prebuild has every executor that is an executor.Prebuilder build the programs
// srcs and the metamorphic variants Check would run of them, so that
// checking them afterwards costs no compile each. Sources that do not
// check are skipped (Check reports them). The error is the first
// executor's that failed; it may be ignored, Check then builds each
// program itself.
func (c *Checker) Prebuild(ctx context.Context, srcs [][]byte) error {
	var pbs []executor.Prebuilder
	var pbIdx []int // the index of each of pbs in c.Executors
	for i, e := range c.Executors {
		if pb, ok := e.(executor.Prebuilder); ok {
			pbs = append(pbs, pb)
			pbIdx = append(pbIdx, i)
		}
	}
	if len(pbs) == 0 {
		return nil
	}
	var ps []*ir.Program
	var seeds []uint64 // the //rx:seed of each of ps's programs (of the original, for a variant)
	seed := uint64(harness.DefaultScenarioSeed)
	// The names are Check's and checkVariants': a program's file name is
	// part of its IR, so of what is built.
	lower := func(name string, src []byte) (*program.File, bool) {
		f, err := program.Parse(name, src)
		if err != nil {
			return nil, false
		}
		p, err := program.Lower(f)
		if err != nil {
			return nil, false
		}
		if name == "fuzz.rx" {
			seed = uint64(harness.DefaultScenarioSeed)
			if f.HasSeed {
				seed = f.Seed
			}
		}
		ps, seeds = append(ps, p), append(seeds, seed)
		return f, true
	}
	for _, src := range srcs {
		_, ok := lower("fuzz.rx", src)
		if !ok || c.Metamorphic <= 0 {
			continue
		}
		vs, err := Variants(src, seed, c.Metamorphic)
		if err != nil {
			continue
		}
		for _, v := range vs {
			lower("emi.rx", v.Source)
		}
	}
	var first error
	for i, pb := range pbs {
		var mine []*ir.Program
		for j, p := range ps {
			if c.runsFor(c.Executors, seeds[j])[pbIdx[i]] {
				mine = append(mine, p)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if err := pb.Prebuild(ctx, mine); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// byNameError is Check's refusal of an executor that serves functions by
// name (executor.ErrByName).
func byNameError(name executor.Name, served []string) error {
	list := "no functions"
	if len(served) > 0 {
		list = strings.Join(served, ", ")
	}
	return fmt.Errorf("%w: executor %s serves its own functions by name (%s) and runs that code whatever program it is given, "+
		"so it cannot be fuzzed or reduced: every generated or shrunk program would be skipped or compared with the wrong code; "+
		"compare it on the .rx file that describes its functions with rxeq run (or rxginkgo)", executor.ErrByName, name, list)
}

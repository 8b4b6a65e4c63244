// Package selftest proves that rxeq's comparison can fail: it runs
// scenarios through deliberately wrong executors (mutants) and checks that
// the harness reports every one of them.
//
// Each mutant runs the fallback interpreter and then breaks its outcome in
// one realistic way: a class flipped in a row other than the first, a
// stray NaN, one element off by ten tolerances, a wrong shape, a mutated
// input, a dropped row, two outputs swapped, a wrong runtime error text.
// Every break is a real disagreement (a stray NaN replaces a value that is
// not NaN, a mutated input changes a finite value), so a mutant is caught
// only when every case it broke is reported as not passing; it escapes
// when any broken case passes; and it is not exercised when the scenarios
// gave it nothing to break (that too fails the self-test, since then the
// scenarios prove nothing about it, unless Options.AllowNotExercised: a
// user's files need not hold every kind of output). The unbroken fallback
// runs beside the mutants, and files that already fail through it are an
// error (ErrBaseline): every mutant would look caught. A
// loosened comparison (a tolerance without its relative part, classes
// compared in row 0 only, a NaN on one side counted as a match) lets some
// mutant escape, so `rxeq selftest` in CI catches a comparison bug that no
// agreement between correct executors can show.
//
// The mutants reach only the rules the scenarios happen to need, so every
// rule of the judgement (Rules: the comparison's NaN, infinity, signed-zero,
// tolerance, class and error rules, the blame, the source lock and the
// external-executor checks) also has a canary (Canaries): a built-in case
// that rule, and nothing else, must flag, next to a control (the same case
// unbroken) that must pass. RunCanaries runs them against a Judgement
// (rxeq's own by default; tests plant weakened ones to show the canaries
// fail) and names each rule whose canary was missed. The external
// canaries run a program through ServeHostile, a deliberately wrong
// executor that rxeq serves as `rxeq selftest-executor --misbehave KIND`.
package selftest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// ErrNotCaught is wrapped by Run's error when a mutant escaped, or was
// not exercised (unless Options.AllowNotExercised).
var ErrNotCaught = errors.New("the comparison missed a deliberately wrong executor")

// ErrBaseline is wrapped by Run's error when the files already fail
// through the unbroken fallback interpreter: every mutant would then look
// caught, and the self-test would prove nothing.
var ErrBaseline = errors.New("the files fail without any mutant")

// ErrUnknownMutant is wrapped by Select's error for a name that is not a
// built-in mutant's.
var ErrUnknownMutant = errors.New("unknown mutant")

// Mutant is a deliberately wrong executor: the fallback interpreter whose
// outcome Break changes in one way.
type Mutant struct {
	// Name identifies the mutant (and is its executor name, "mutant-NAME").
	Name string
	// What says what it breaks, for the report.
	What string
	// Break changes one run's outcome (outputs, error, or the inputs) and
	// reports whether it changed anything. fn is the function, res its
	// declared results in order, tol the float tolerance of each output
	// (its //rx:tolerance, else the default).
	Break func(fn *program.Func, inputs map[string]*tensor.Tensor, out *executor.Outcome, err *error, tol func(output string) compare.Tolerance) bool
}

// Mutants returns the built-in mutants.
func Mutants() []Mutant {
	return []Mutant{
		{Name: "class-flip", What: "one class changed to another valid class, in the last row of a batch (not the first)", Break: classFlip},
		{Name: "stray-nan", What: "one float element replaced by NaN", Break: strayNaN},
		{Name: "off-by-ten-tolerances", What: "one float element moved by ten times its allowed error", Break: offByTen},
		{Name: "wrong-shape", What: "a float output's dims reversed (same data)", Break: wrongShape},
		{Name: "mutated-input", What: "one input element changed in place", Break: mutateInput},
		{Name: "dropped-row", What: "the last row of every batched output dropped", Break: droppedRow},
		{Name: "swapped-outputs", What: "two float outputs of the same shape swapped", Break: swapOutputs},
		{Name: "wrong-error-text", What: "a runtime error's text reworded", Break: wrongErrorText},
	}
}

// Verdict is what became of one mutant.
type Verdict string

// The verdicts.
const (
	Caught       Verdict = "caught"
	Escaped      Verdict = "ESCAPED"
	NotExercised Verdict = "NOT EXERCISED"
)

// Outcome is one mutant's result.
type Outcome struct {
	Mutant  Mutant
	Broken  int     // cases whose outcome it changed
	Flagged int     // of those, cases reported as not passing
	Verdict Verdict // Caught when Flagged == Broken > 0
	// Example is the report of one flagged case (its first line).
	Example string
}

// Options configure Run.
type Options struct {
	// Mutants to run; default Mutants().
	Mutants []Mutant
	// Harness options (batches, seed, parallelism); Executors, Backends and
	// Reference are set by Run.
	Harness harness.Options
	// AllowNotExercised: a mutant the files gave nothing to break (no
	// runtime error for wrong-error-text, no class output for class-flip)
	// is reported as NOT EXERCISED but does not fail the run. Set it for a
	// user's files, which need not contain every kind of output; the
	// built-in catalog must exercise every mutant.
	AllowNotExercised bool
}

// Select returns the built-in mutants without those named in skip, or an
// error wrapping ErrUnknownMutant naming the valid names.
func Select(skip []string) ([]Mutant, error) {
	all := Mutants()
	var names []string
	for _, m := range all {
		names = append(names, m.Name)
	}
	for _, n := range skip {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownMutant, n, strings.Join(names, ", "))
		}
	}
	var out []Mutant
	for _, m := range all {
		if !slices.Contains(skip, m.Name) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Run runs files through every mutant and returns one Outcome per mutant,
// in order. The error wraps ErrNotCaught when any mutant was not caught.
func Run(ctx context.Context, files []*program.File, opts Options) ([]Outcome, error) {
	muts := opts.Mutants
	if muts == nil {
		muts = Mutants()
	}
	hopts := opts.Harness
	hopts.SkipLocks = true
	tol := compare.DefaultTolerance()
	if hopts.Tolerance != nil {
		tol = *hopts.Tolerance
	}
	// The mutants break the fallback interpreter's outcomes; it comes
	// from the registry like every executor.
	sel, err := builtin.Select([]executor.Name{executor.Fallback}, builtin.Config{}, nil)
	if err != nil {
		return nil, err
	}
	base := sel.Executors[0]
	outs := make([]Outcome, len(muts))
	execs := make([]executor.Executor, len(muts))
	names := make([]executor.Name, len(muts))
	tallies := make([]*tally, len(muts))
	for i, m := range muts {
		tallies[i] = &tally{broken: map[string]bool{}}
		execs[i] = &mutantExecutor{base: base, m: m, tol: tol, tally: tallies[i]}
		names[i] = execs[i].Name()
	}
	// The unbroken fallback runs beside the mutants: if it fails already,
	// every mutant would look caught.
	hopts.Executors = append([]executor.Executor{base}, execs...)
	hopts.Backends = append([]executor.Name{base.Name()}, names...)
	res, err := harness.Run(ctx, files, hopts)
	if err != nil && res == nil {
		return nil, err
	}
	if err := baseline(res, base.Name()); err != nil {
		return nil, err
	}
	var missed []string
	for i, m := range muts {
		o := Outcome{Mutant: m, Broken: len(tallies[i].broken)}
		for _, c := range res.Cases {
			if c.Executor != names[i] || !tallies[i].has(c.Scenario, c.Function, c.Batch) {
				continue
			}
			if c.Status != harness.StatusPass {
				o.Flagged++
				if o.Example == "" {
					msg := c.Message
					if msg == "" {
						msg = c.Error
					}
					o.Example, _, _ = strings.Cut(msg, "\n")
				}
			}
		}
		switch {
		case o.Broken == 0:
			o.Verdict = NotExercised
		case o.Flagged < o.Broken:
			o.Verdict = Escaped
		default:
			o.Verdict = Caught
		}
		if o.Verdict == Escaped || o.Verdict == NotExercised && !opts.AllowNotExercised {
			missed = append(missed, fmt.Sprintf("%s (%s: %d of %d broken cases flagged)", m.Name, strings.ToLower(string(o.Verdict)), o.Flagged, o.Broken))
		}
		outs[i] = o
	}
	if len(missed) > 0 {
		return outs, fmt.Errorf("%w: %s", ErrNotCaught, strings.Join(missed, ", "))
	}
	return outs, err
}

// baseline returns an error wrapping ErrBaseline that lists the cases
// of res in which the unbroken executor base does not pass, or nil.
func baseline(res *harness.Result, base executor.Name) error {
	var bad []string
	n := 0
	for _, c := range res.Cases {
		if c.Executor != base || c.Status == harness.StatusPass || c.Status == harness.StatusSkip {
			continue
		}
		n++
		if len(bad) < 5 {
			msg := c.Message
			if msg == "" {
				msg = c.Error
			}
			for _, o := range c.Outputs {
				if !o.OK && o.Report != "" {
					msg = o.Report
					break
				}
			}
			first, _, _ := strings.Cut(msg, "\n")
			bad = append(bad, fmt.Sprintf("%s %s: %s", strings.ToUpper(string(c.Status)), c.Name(), first))
		}
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(bad) {
		more = fmt.Sprintf("\n  … and %d more", n-len(bad))
	}
	return fmt.Errorf("%w: %d case(s) fail through the unbroken %s interpreter, so every mutant would look caught; "+
		"make `rxeq run --backend %s` pass on these files first:\n  %s%s", ErrBaseline, n, base, base, strings.Join(bad, "\n  "), more)
}

// tally records which cases a mutant broke. The harness runs cases on
// several goroutines.
type tally struct {
	mu     sync.Mutex
	broken map[string]bool
}

// anyBatch keys a function without a batch symbol: it runs with the same
// inputs at every batch, so its breakage counts for each.
const anyBatch = -1

func key(scenario, fn string, batch int) string {
	return fmt.Sprintf("%s\x00%s\x00%d", scenario, fn, batch)
}

func (t *tally) has(scenario, fn string, batch int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.broken[key(scenario, fn, batch)] || t.broken[key(scenario, fn, anyBatch)]
}

// mutantExecutor is a mutant as an executor.Executor: base (the fallback),
// then Break.
type mutantExecutor struct {
	base  executor.Executor
	m     Mutant
	tol   compare.Tolerance
	tally *tally
}

func (e *mutantExecutor) Name() executor.Name { return executor.Name("mutant-" + e.m.Name) }

func (e *mutantExecutor) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := e.base.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	return &prepared{e: e, f: f, inner: inner, scenario: f.ScenarioName()}, nil
}

type prepared struct {
	e        *mutantExecutor
	f        *program.File
	inner    executor.Prepared
	scenario string
}

func (p *prepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, inputs)
	var f *program.Func
	for _, g := range p.f.Funcs {
		if g.Name == fn {
			f = g
		}
	}
	if f == nil || ctx.Err() != nil {
		return out, err
	}
	tols := compare.Tolerances(p.f, f, p.e.tol)
	tolOf := func(output string) compare.Tolerance {
		if t, ok := tols[output]; ok {
			return t
		}
		return p.e.tol
	}
	if p.e.m.Break(f, inputs, &out, &err, tolOf) {
		batch := batchOf(f, inputs)
		p.e.tally.mu.Lock()
		p.e.tally.broken[key(p.scenario, fn, batch)] = true
		p.e.tally.mu.Unlock()
	}
	return out, err
}

func (p *prepared) Close() error { return p.inner.Close() }

// batchOf returns the size the inputs bind to the function's batch symbol
// (harness.BatchSymbol), as the harness names cases; anyBatch without one.
func batchOf(f *program.Func, inputs map[string]*tensor.Tensor) int {
	sym := harness.BatchSymbol(f)
	for _, prm := range f.Params {
		t := inputs[prm.Name]
		for d, dim := range prm.Type.Shape {
			if dim.IsSym() && dim.Sym == sym && t != nil && d < t.Rank() {
				return t.Shape[d]
			}
		}
	}
	return anyBatch
}

// ---- the mutations ------------------------------------------------------

// floatResults returns the names of fn's float32 results present in out.
func floatResults(fn *program.Func, out *executor.Outcome) []string {
	var names []string
	for _, r := range fn.Results {
		if t := out.Outputs[r.Name]; r.Type.DType == ir.Float32 && t != nil && t.DType == tensor.Float32 && len(t.F32) > 0 {
			names = append(names, r.Name)
		}
	}
	return names
}

// replace gives out a copy of tensor name, so a mutation never writes into
// memory the executor may share with its inputs.
func replace(out *executor.Outcome, name string) *tensor.Tensor {
	t := out.Outputs[name].Clone()
	m := make(map[string]*tensor.Tensor, len(out.Outputs))
	for k, v := range out.Outputs {
		m[k] = v
	}
	m[name] = t
	out.Outputs = m
	return t
}

func classFlip(fn *program.Func, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error, _ func(string) compare.Tolerance) bool {
	if *err != nil {
		return false
	}
	sources := compare.ClassSources(fn)
	for _, r := range fn.Results {
		t := out.Outputs[r.Name]
		if r.Type.DType != ir.Int64 || t == nil || len(t.I64) < 2 {
			continue
		}
		last := len(t.I64) - 1
		old := t.I64[last]
		// Another valid class index: the next one modulo the class count
		// (the scores' size along the Argmax axis), so a 5-class output
		// never gets class 5. Without known scores, a neighbour that
		// stays within the indices the output already holds.
		var flipped int64
		if src, ok := sources[r.Name]; ok && out.Outputs[src.Scores] != nil && src.Axis < out.Outputs[src.Scores].Rank() {
			n := int64(out.Outputs[src.Scores].Shape[src.Axis])
			if n < 2 || old < 0 || old >= n {
				continue
			}
			flipped = (old + 1) % n
		} else if old > 0 {
			flipped = old - 1
		} else if slices.Max(t.I64) > old {
			flipped = old + 1
		} else {
			continue
		}
		t = replace(out, r.Name)
		t.I64[last] = flipped
		return true
	}
	return false
}

func strayNaN(fn *program.Func, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error, _ func(string) compare.Tolerance) bool {
	if *err != nil {
		return false
	}
	for _, name := range floatResults(fn, out) {
		for i, v := range out.Outputs[name].F32 {
			if v == v {
				t := replace(out, name)
				t.F32[i] = float32(math.NaN())
				return true
			}
		}
	}
	return false
}

func offByTen(fn *program.Func, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error, tol func(string) compare.Tolerance) bool {
	if *err != nil {
		return false
	}
	for _, name := range floatResults(fn, out) {
		for i, x := range out.Outputs[name].F32 {
			v := float64(x)
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e30 {
				continue
			}
			t := replace(out, name)
			t.F32[i] = float32(v + 10*tol(name).Allowed(v))
			return true
		}
	}
	return false
}

func wrongShape(fn *program.Func, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error, _ func(string) compare.Tolerance) bool {
	if *err != nil {
		return false
	}
	for _, name := range floatResults(fn, out) {
		t := out.Outputs[name]
		rev := slices.Clone(t.Shape)
		slices.Reverse(rev)
		if slices.Equal(rev, t.Shape) {
			continue
		}
		t = replace(out, name)
		t.Shape = rev
		return true
	}
	return false
}

func mutateInput(fn *program.Func, inputs map[string]*tensor.Tensor, _ *executor.Outcome, _ *error, _ func(string) compare.Tolerance) bool {
	for _, prm := range fn.Params {
		t := inputs[prm.Name]
		if t == nil || t.DType != tensor.Float32 {
			continue
		}
		for i, v := range t.F32 {
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) && math.Abs(float64(v)) < 1e30 {
				t.F32[i] = v + 1
				return true
			}
		}
	}
	return false
}

func droppedRow(fn *program.Func, inputs map[string]*tensor.Tensor, out *executor.Outcome, err *error, _ func(string) compare.Tolerance) bool {
	if *err != nil || batchOf(fn, inputs) < 2 {
		return false
	}
	changed := false
	for _, r := range fn.Results {
		t := out.Outputs[r.Name]
		if t == nil || len(r.Type.Shape) == 0 || !r.Type.Shape[0].IsSym() || t.Rank() == 0 || t.Shape[0] < 2 {
			continue
		}
		t = replace(out, r.Name)
		t.Shape[0]--
		t.F32 = t.F32[:min(len(t.F32), t.Len())]
		t.I64 = t.I64[:min(len(t.I64), t.Len())]
		changed = true
	}
	return changed
}

func swapOutputs(fn *program.Func, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error, _ func(string) compare.Tolerance) bool {
	if *err != nil {
		return false
	}
	names := floatResults(fn, out)
	sort.Strings(names)
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			a, b := out.Outputs[names[i]], out.Outputs[names[j]]
			if slices.Equal(a.Shape, b.Shape) && !slices.Equal(a.F32, b.F32) {
				replace(out, names[i])
				out.Outputs[names[i]], out.Outputs[names[j]] = b, a
				return true
			}
		}
	}
	return false
}

func wrongErrorText(_ *program.Func, _ map[string]*tensor.Tensor, _ *executor.Outcome, err *error, _ func(string) compare.Tolerance) bool {
	var re *ir.RuntimeError
	if *err == nil || !errors.As(*err, &re) {
		return false
	}
	*err = &ir.RuntimeError{Kind: re.Kind, Func: re.Func, Detail: strings.Replace(re.Detail, "division", "divide", 1) + " (reworded)"}
	return true
}

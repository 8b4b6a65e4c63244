// Package sweep tests one function of a user's fixed scorer against the
// oracle on many inputs, as Hypothesis does: many seeds, the file's own
// input distributions and adversarial ones (the edge kinds), and when an
// input fails, it is shrunk to a minimal one that still fails: the
// fewest rows (one, when a single row fails alone), then the simplest
// values (each element tried as 0, ±1, one significant digit, an
// integer), keeping every change after which the case still fails.
//
// The executor is the code under test: an external executor serving the
// user's function by name, rxginkgo.FuncExecutor over Go code, or any
// executor.Executor. The judgement is rxeq's (compare.Outputs with the
// file's //rx:tolerance bounds, compare.Errors or compare.ErrorKinds),
// except that an output mismatch float32 itself explains (the blame
// float32-limit: harness.Float32Limit) is excused and counted
// (Result.Excused), not a failure: edge kinds reach inputs that overflow
// float32 inside a function where the float64 oracle does not, and every
// float32 implementation differs there.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// Defaults of Options.
const (
	DefaultSeeds     = 100
	DefaultMaxShrink = 2000
)

// ErrSweep is wrapped by Run's error when it cannot sweep at all (a
// function the file lacks, an executor that cannot prepare the file).
var ErrSweep = errors.New("cannot sweep")

// Options configure Run.
type Options struct {
	// Seeds is how many input sets are drawn per batch (default 100):
	// seed k is the file's seed (or harness.DefaultScenarioSeed) plus k.
	Seeds int
	// Batches replace the file's //rx:batches.
	Batches []int
	// Edges are the edge kinds (tensor.EdgeKinds) every float input is
	// drawn from in turn besides the file's own distributions: seed k uses
	// the file's for k mod (len(Edges)+1) == 0, else edge(Edges[…]).
	// nil means tensor.EdgeKinds; an empty non-nil slice the file's alone.
	Edges []string
	// Tolerance of float outputs without //rx:tolerance (default
	// compare.DefaultTolerance()); MaxULP and ErrorKinds as in
	// harness.Options.
	Tolerance  *compare.Tolerance
	MaxULP     int64
	ErrorKinds bool
	// MaxShrink bounds the runs spent shrinking a failure (default 2000).
	MaxShrink int
}

// Failure is a failing input, shrunk.
type Failure struct {
	Function string
	Batch    int    // the batch it was drawn at
	Seed     uint64 // the seed it was drawn from
	Dists    string // the distributions it was drawn from: "file" or "edge(KIND)"
	// Inputs are the shrunk inputs (the batch is their leading size).
	Inputs map[string]*tensor.Tensor
	Rows   int // rows of the shrunk inputs
	// Report says how the shrunk input fails (the mismatch report or
	// the error disagreement); Original how the drawn one failed.
	Report, Original string
	Shrinks          int // runs spent shrinking
}

// Result is what Run found.
type Result struct {
	Runs int // cases judged (each: one oracle run, one executor run)
	// Excused counts the cases whose outputs differed from the oracle's
	// only as float32 itself must (harness.Float32Limit: an input that
	// overflows or underflows float32 inside the function, where the
	// float64 oracle does not); they are not failures.
	Excused int
	Failure *Failure // the first failing input, shrunk; nil when all agree
}

// Run sweeps function fn of f through e. It stops at the first failing
// input and shrinks it.
func Run(ctx context.Context, f *program.File, fn string, e executor.Executor, opts Options) (*Result, error) {
	pf := f.Func(fn)
	if pf == nil {
		return nil, fmt.Errorf("%w: %s has no function %s", ErrSweep, f.Name, fn)
	}
	only := *f
	only.Funcs = []*program.Func{pf}
	p, err := program.Lower(&only)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSweep, err)
	}
	ref := builtin.Reference()
	refPrep, err := ref.Prepare(ctx, &only, p)
	if err != nil {
		return nil, fmt.Errorf("%w: the oracle: %w", ErrSweep, err)
	}
	defer refPrep.Close()
	prep, err := executor.SafePrepare(ctx, e, &only, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSweep, e.Name(), err)
	}
	defer prep.Close()
	tol := compare.DefaultTolerance()
	if opts.Tolerance != nil {
		tol = *opts.Tolerance
	}
	tols := compare.TolerancesFor(&only, pf, tol, string(e.Name()))
	if opts.MaxULP > 0 {
		for n, t := range tols {
			if !t.UseULP {
				t.UseULP, t.ULP = true, opts.MaxULP
				tols[n] = t
			}
		}
	}
	j := &judge{fn: pf, refExec: ref, ref: refPrep, got: prep, tols: tols, classes: compare.ClassSources(pf), kinds: opts.ErrorKinds}
	seeds := opts.Seeds
	if seeds <= 0 {
		seeds = DefaultSeeds
	}
	edges := opts.Edges
	if edges == nil {
		edges = tensor.EdgeKinds
	}
	batches := opts.Batches
	if len(batches) == 0 {
		batches = f.Batches
	}
	if len(batches) == 0 {
		batches = []int{harness.DefaultBatch}
	}
	base := uint64(harness.DefaultScenarioSeed)
	if f.HasSeed {
		base = f.Seed
	}
	res := &Result{}
	for k := range seeds {
		plan := k % (len(edges) + 1)
		drawn, dists := &only, "file"
		if plan > 0 {
			drawn, dists = withEdge(&only, pf, edges[plan-1]), "edge("+edges[plan-1]+")"
		}
		for _, b := range batches {
			seed := base + uint64(k)
			inputs, err := harness.GenerateInputs(drawn, pf, b, seed, nil)
			if err != nil {
				return res, fmt.Errorf("%w: %w", ErrSweep, err)
			}
			res.Runs++
			why, excused, err := j.fails(ctx, inputs)
			if err != nil {
				return res, err
			}
			if excused {
				res.Excused++
			}
			if why == "" {
				continue
			}
			fail := &Failure{Function: fn, Batch: b, Seed: seed, Dists: dists, Original: why}
			fail.Inputs, fail.Report, fail.Shrinks, err = j.shrink(ctx, inputs, why, opts.MaxShrink)
			fail.Rows = rowsOf(pf, fail.Inputs)
			res.Failure = fail
			return res, err
		}
	}
	return res, nil
}

// withEdge returns f with every float input of fn drawn from edge(kind).
func withEdge(f *program.File, fn *program.Func, kind string) *program.File {
	g := *f
	g.Inputs = append([]program.Input(nil), f.Inputs...)
	for i, in := range g.Inputs {
		for _, prm := range fn.Params {
			if prm.Name == in.Param && prm.Type.Rank() > 0 {
				g.Inputs[i].Dist = tensor.Dist{Kind: tensor.Edge, Edge: kind}
			}
		}
	}
	return &g
}

// judge runs one input set through the oracle and the executor.
type judge struct {
	fn       *program.Func
	refExec  executor.Executor // the oracle, which can also round to float32
	ref, got executor.Prepared
	tols     map[string]compare.Tolerance
	classes  map[string]compare.ClassSource
	kinds    bool
}

// fails returns why inputs fail ("" when they agree). Each executor gets
// its own copy of the inputs. An output mismatch that float32 itself
// explains (harness.Float32Limit: the oracle rounding every op to float32
// misses the same way, as when an edge(huge) input overflows a MatMul) is
// no failure of the code under test: fails returns "" and excused true.
func (j *judge) fails(ctx context.Context, inputs map[string]*tensor.Tensor) (why string, excused bool, err error) {
	want, wantErr := safeRun(ctx, j.ref, j.fn.Name, tensor.CloneMap(inputs))
	got, gotErr := safeRun(ctx, j.got, j.fn.Name, tensor.CloneMap(inputs))
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	if errors.Is(gotErr, executor.ErrUnserved) {
		return "", false, fmt.Errorf("%w: %w", ErrSweep, gotErr)
	}
	if wantErr != nil || gotErr != nil {
		cmpErr := compare.Errors
		if j.kinds {
			cmpErr = compare.ErrorKinds
		}
		if ok, msg := cmpErr(wantErr, gotErr); !ok {
			return msg, false, nil
		}
		return "", false, nil
	}
	metrics, extra := compare.Outputs(j.fn, want.Outputs, got.Outputs, j.tols, j.classes)
	var problems []string
	for _, m := range metrics {
		if !m.OK {
			problems = append(problems, m.Report)
		}
	}
	if len(extra) > 0 {
		problems = append(problems, compare.Undeclared(extra))
	}
	if len(problems) > 0 && len(extra) == 0 &&
		harness.Float32Limit(ctx, j.refExec, j.fn, tensor.CloneMap(inputs), want.Outputs, got.Outputs, metrics, j.tols) {
		return "", true, nil
	}
	return strings.Join(problems, "\n"), false, nil
}

func safeRun(ctx context.Context, p executor.Prepared, fn string, in map[string]*tensor.Tensor) (out executor.Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: panic: %v", executor.ErrExecutor, v)
		}
	}()
	return p.Run(ctx, fn, in)
}

// batchDim returns, per parameter, the dimension the batch symbol binds
// (-1 for none); ok is false unless every batched parameter has it first.
func batchDims(fn *program.Func) (map[string]int, bool) {
	sym := fn.BatchSymbol()
	dims := map[string]int{}
	for _, prm := range fn.Params {
		dims[prm.Name] = -1
		for d, dim := range prm.Type.Shape {
			if sym != "" && dim.IsSym() && dim.Sym == sym {
				if d != 0 {
					return nil, false
				}
				dims[prm.Name] = 0
			}
		}
	}
	return dims, sym != ""
}

func rowsOf(fn *program.Func, in map[string]*tensor.Tensor) int {
	dims, ok := batchDims(fn)
	if !ok {
		return 0
	}
	for name, d := range dims {
		if d == 0 && in[name] != nil && in[name].Rank() > 0 {
			return in[name].Shape[0]
		}
	}
	return 0
}

// row returns the inputs with every batched parameter cut to row r.
func row(in map[string]*tensor.Tensor, dims map[string]int, r int) map[string]*tensor.Tensor {
	out := make(map[string]*tensor.Tensor, len(in))
	for name, t := range in {
		if dims[name] != 0 || t.Rank() == 0 {
			out[name] = t.Clone()
			continue
		}
		per := t.Len() / t.Shape[0]
		shape := append([]int{1}, t.Shape[1:]...)
		c := tensor.FromFloat32(append([]float32(nil), t.F32[r*per:(r+1)*per]...), shape...)
		out[name] = c
	}
	return out
}

// shrink makes inputs smaller while they still fail, within budget runs.
func (j *judge) shrink(ctx context.Context, inputs map[string]*tensor.Tensor, why string, budget int) (map[string]*tensor.Tensor, string, int, error) {
	if budget <= 0 {
		budget = DefaultMaxShrink
	}
	runs := 0
	try := func(cand map[string]*tensor.Tensor) (bool, error) {
		runs++
		w, _, err := j.fails(ctx, cand)
		if err != nil || w == "" {
			return false, err
		}
		why = w
		return true, nil
	}
	cur := inputs
	// Fewest rows: one row that fails alone.
	if dims, ok := batchDims(j.fn); ok && allFloat(cur, dims) {
		if n := rowsOf(j.fn, cur); n > 1 {
			for r := 0; r < n && runs < budget; r++ {
				cand := row(cur, dims, r)
				ok, err := try(cand)
				if err != nil {
					return cur, why, runs, err
				}
				if ok {
					cur = cand
					break
				}
			}
		}
	}
	// Simplest values, element by element.
	names := make([]string, 0, len(cur))
	for _, prm := range j.fn.Params {
		if t := cur[prm.Name]; t != nil && t.DType == tensor.Float32 {
			names = append(names, prm.Name)
		}
	}
	for _, name := range names {
		for i := range cur[name].F32 {
			v := cur[name].F32[i]
			for _, s := range simpler(v) {
				if runs >= budget {
					return cur, why, runs, nil
				}
				cand := tensor.CloneMap(cur)
				cand[name].F32[i] = s
				ok, err := try(cand)
				if err != nil {
					return cur, why, runs, err
				}
				if ok {
					cur = cand
					break
				}
			}
		}
	}
	return cur, why, runs, nil
}

func allFloat(in map[string]*tensor.Tensor, dims map[string]int) bool {
	for name, d := range dims {
		if d == 0 && in[name] != nil && in[name].DType != tensor.Float32 {
			return false
		}
	}
	return true
}

// simpler lists values simpler than v, simplest first: 0, ±1, v to one
// significant digit, v rounded to an integer; only those different from v.
func simpler(v float32) []float32 {
	if v == 0 && !math.Signbit(float64(v)) {
		return nil
	}
	var out []float32
	add := func(s float32) {
		if s != v || math.Signbit(float64(s)) != math.Signbit(float64(v)) {
			for _, o := range out {
				if o == s {
					return
				}
			}
			out = append(out, s)
		}
	}
	add(0)
	if v > 0 {
		add(1)
	} else {
		add(-1)
	}
	f := float64(v)
	if !math.IsNaN(f) && !math.IsInf(f, 0) {
		if f != 0 {
			e := math.Pow(10, math.Floor(math.Log10(math.Abs(f))))
			add(float32(math.Round(f/e) * e))
		}
		add(float32(math.Round(f)))
	}
	return out
}

// WriteInputs writes a failure's inputs as .npy files where `rxeq run
// --inputs DIR` finds them (DIR/SCENARIO/FUNCTION/PARAM.npy) and returns
// the paths.
func WriteInputs(dir string, f *program.File, fail *Failure) ([]string, error) {
	base := filepath.Join(dir, f.ScenarioName(), fail.Function)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, prm := range f.Func(fail.Function).Params {
		t := fail.Inputs[prm.Name]
		if t == nil || t.DType != tensor.Float32 {
			continue // an int64 scalar is generated as the file says
		}
		p := filepath.Join(base, prm.Name+".npy")
		if err := npy.WriteFile(p, t); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

package rxginkgo

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/sweep"
	"github.com/rextio/rxeq/tensor"
)

// Func is a scoring function of your own Go code under test (plain Go, or
// a cgo wrapper around a C or C++ library): it takes the inputs by the
// .rx function's parameter names (float32 tensors, int64 scalars as
// rank-0 int64 tensors) and returns its outputs by the .rx function's
// result names. It must not modify the inputs (the runner checks), and it
// may be called from several goroutines at once. A runtime error should
// be an *ir.RuntimeError, or wrap one of the ir.Err* kinds when
// compared by kind only (harness.Options.ErrorKinds).
type Func func(ctx context.Context, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error)

// FuncExecutor returns an in-process executor.Executor called name that
// runs fns[f] for the program's function f, whatever the program's
// source says: it serves those functions by name (executor.ByName), so
// rxeq fuzz and reduce refuse it, and a function of the program that fns
// lacks is skipped with the reason (executor.ErrUnserved). It is the
// whole of an in-process executor; use it in harness.Options.Executors,
// rxginkgo.OnlyExecutors or WithExecutors:
//
//	mine := rxginkgo.FuncExecutor("mine", map[string]rxginkgo.Func{"score": myScore})
//	rxginkgo.TableWith("my scorer agrees", rxginkgo.OnlyExecutors(mine), "testdata/scorer.rx")
func FuncExecutor(name string, fns map[string]Func) executor.Executor {
	return funcExecutor{name: executor.Name(name), fns: fns}
}

type funcExecutor struct {
	name executor.Name
	fns  map[string]Func
}

func (e funcExecutor) Name() executor.Name { return e.name }

func (e funcExecutor) Prepare(_ context.Context, f *program.File, _ *ir.Program) (executor.Prepared, error) {
	return funcPrepared{e}, nil
}

type funcPrepared struct{ e funcExecutor }

func (p funcPrepared) Run(ctx context.Context, fn string, inputs map[string]*tensor.Tensor) (executor.Outcome, error) {
	f, ok := p.e.fns[fn]
	if !ok || f == nil {
		return executor.Outcome{Path: p.e.name}, fmt.Errorf("%w: %s does not serve %s (it serves %s)", executor.ErrUnserved, p.e.name, fn, strings.Join(p.ServedByName(), ", "))
	}
	out, err := f(ctx, inputs)
	return executor.Outcome{Outputs: out, Path: p.e.name}, err
}

// ServedByName returns the names of the Go functions (executor.ByName).
func (p funcPrepared) ServedByName() []string {
	names := make([]string, 0, len(p.e.fns))
	for n := range p.e.fns {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (funcPrepared) Close() error { return nil }

// AgreeWith succeeds when the actual Go function (a Func, or a
// func(map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error))
// agrees with the oracle on function fn of the .rx scenario at path, at
// each of the file's //rx:batches, on the file's generated inputs and
// with its //rx:tolerance bounds, errors included:
//
//	Expect(myScorer).To(rxginkgo.AgreeWith("testdata/two_layer.rx", "score2"))
//
// opts, at most one, are harness options for the run (Batches, Seed,
// Inputs, MaxULP, ErrorKinds, …); its Executors are replaced by the
// function under test. The failure message gives each failing case as an
// rxginkgo table would: the //rx:tolerance line whose bound failed, each
// output's bound, and the mismatch report.
func AgreeWith(path, fn string, opts ...harness.Options) types.GomegaMatcher {
	return &matcher{
		negated: fmt.Sprintf("expected the function to disagree with %s of %s, but it agrees", fn, path),
		match: func(actual any) (bool, string, error) {
			f, err := asFunc(actual)
			if err != nil {
				return false, "", fmt.Errorf("AgreeWith %w", err)
			}
			if len(opts) > 1 {
				return false, "", fmt.Errorf("AgreeWith takes at most one harness.Options, got %d", len(opts))
			}
			src, err := program.ReadFile(path)
			if err != nil {
				return false, "", err
			}
			file, err := program.ParseScenario(path, src)
			if err != nil {
				return false, "", fmt.Errorf("%s does not check:\n%w", path, err)
			}
			pf := file.Func(fn)
			if pf == nil {
				return false, "", fmt.Errorf("%s has no function %s", path, fn)
			}
			var o harness.Options
			if len(opts) == 1 {
				o = opts[0]
			}
			o.Executors = []executor.Executor{FuncExecutor("go", map[string]Func{fn: f})}
			o.Unavailable, o.Backends = nil, nil
			o.SkipLocks = true // the lock is about rxeq's generated C, not your code
			only := *file
			only.Funcs = []*program.Func{pf}
			res, err := harness.Run(context.Background(), []*program.File{&only}, o)
			if err != nil {
				return false, "", err
			}
			if res.OK() && SkipReason(res) == "" {
				return true, "", nil
			}
			var b strings.Builder
			for _, rc := range res.Cases {
				if rc.Status == harness.StatusPass {
					continue
				}
				c := Case{File: file, Function: fn, Batch: rc.Batch, Executor: rc.Executor}
				b.WriteString(c.failure(&harness.Result{Cases: []harness.Case{rc}}) + "\n")
			}
			return false, strings.TrimSuffix(b.String(), "\n"), nil
		},
	}
}

// MustLoad reads and checks the .rx scenario at path, for use in a suite
// (sweep.Run takes the file): a file that cannot be read or does not
// check panics with its errors, which ginkgo reports.
func MustLoad(path string) *program.File {
	src, err := program.ReadFile(path)
	if err == nil {
		var f *program.File
		if f, err = program.ParseScenario(path, src); err == nil {
			return f
		}
	}
	panic(fmt.Sprintf("rxginkgo: %v", err))
}

// AgreeOnSweep is AgreeWith over many inputs (sweep.Run): opts.Seeds
// input sets per batch, from the file's distributions and each edge kind,
// and a failing one shrunk to the fewest rows and simplest values. The
// failure message gives the drawn failure, the shrunk inputs and how they
// fail:
//
//	Expect(rxginkgo.Func(myScore)).To(rxginkgo.AgreeOnSweep("testdata/scorer.rx", "score", sweep.Options{Seeds: 200}))
func AgreeOnSweep(path, fn string, opts sweep.Options) types.GomegaMatcher {
	return &matcher{
		negated: fmt.Sprintf("expected the function to disagree with %s of %s on some input, but it agrees on all", fn, path),
		match: func(actual any) (bool, string, error) {
			f, err := asFunc(actual)
			if err != nil {
				return false, "", fmt.Errorf("AgreeOnSweep %w", err)
			}
			src, err := program.ReadFile(path)
			if err != nil {
				return false, "", err
			}
			file, err := program.ParseScenario(path, src)
			if err != nil {
				return false, "", fmt.Errorf("%s does not check:\n%w", path, err)
			}
			res, err := sweep.Run(context.Background(), file, fn, FuncExecutor("go", map[string]Func{fn: f}), opts)
			if err != nil {
				return false, "", err
			}
			if res.Failure == nil {
				return true, "", nil
			}
			fl := res.Failure
			var b strings.Builder
			fmt.Fprintf(&b, "%s/%s/b%d: seed %d, inputs from %s, after %d cases:\n    %s\n", file.ScenarioName(), fn, fl.Batch, fl.Seed, fl.Dists, res.Runs,
				strings.ReplaceAll(fl.Original, "\n", "\n    "))
			fmt.Fprintf(&b, "shrunk in %d runs to %d row(s):\n", fl.Shrinks, fl.Rows)
			for _, prm := range file.Func(fn).Params {
				if t := fl.Inputs[prm.Name]; t != nil {
					if t.DType == tensor.Int64 {
						fmt.Fprintf(&b, "    %s %v = %v\n", prm.Name, t.Shape, t.I64)
					} else {
						fmt.Fprintf(&b, "    %s %v = %v\n", prm.Name, t.Shape, t.F32)
					}
				}
			}
			fmt.Fprintf(&b, "    %s", strings.ReplaceAll(fl.Report, "\n", "\n    "))
			return false, b.String(), nil
		},
	}
}

// asFunc turns AgreeWith's and AgreeOnSweep's actual into a Func.
func asFunc(actual any) (Func, error) {
	switch a := actual.(type) {
	case Func:
		return a, nil
	case func(context.Context, map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error):
		return a, nil
	case func(map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error):
		return func(_ context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) { return a(in) }, nil
	}
	return nil, fmt.Errorf("expects a rxginkgo.Func or a func(map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error), got %T", actual)
}

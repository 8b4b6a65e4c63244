package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// addInvarianceCases adds to res, for every function of files whose
// results do not all mix rows (harness.RowIndependence), one case per
// executor (the reference included, and only those Backends keeps) with
// Check "invariance": at the largest batch, the executor's own results
// must not change, bit for bit, when a row is computed alone, the rows
// are reversed or shifted (harness.CheckInvariance). No oracle is
// involved.
//
// It returns the value class (fuzz.Finding.Values) of each failing
// invariance case, by case name, for the ledger.
func addInvarianceCases(ctx context.Context, res *harness.Result, files []*program.File, opts harness.Options) (map[string]string, error) {
	values := map[string]string{}
	ref := opts.Reference
	if ref == nil {
		ref = builtin.Reference()
	}
	execs := append([]executor.Executor{ref}, opts.Executors...)
	for _, f := range files {
		p, err := program.Lower(f)
		if err != nil {
			return values, fmt.Errorf("invariance: %s: %w", f.Name, err)
		}
		batches := opts.Batches
		if len(batches) == 0 {
			batches = f.Batches
		}
		if len(batches) == 0 {
			batches = []int{1}
		}
		batch := slices.Max(batches)
		seed := uint64(harness.DefaultScenarioSeed)
		if opts.Seed != nil {
			seed = *opts.Seed
		} else if f.HasSeed {
			seed = f.Seed
		}
		for _, e := range execs {
			if len(opts.Backends) > 0 && !slices.Contains(opts.Backends, e.Name()) {
				continue
			}
			start := time.Now()
			prep, perr := executor.SafePrepare(ctx, e, f, p)
			for _, fn := range f.Funcs {
				irFn := p.Func(fn.Name)
				if _, _, ok := harness.RowIndependence(irFn); !ok {
					continue
				}
				c := harness.Case{Scenario: f.ScenarioName(), File: f.Name, Function: fn.Name, Batch: batch, Seed: seed,
					Executor: e.Name(), Path: e.Name(), Check: "invariance", Status: harness.StatusPass}
				if perr != nil {
					c.Status, c.Error, c.Message = harness.StatusError, perr.Error(), perr.Error()
					res.Cases = append(res.Cases, c)
					continue
				}
				inputs, err := harness.GenerateInputs(f, fn, batch, seed, nil)
				if err != nil {
					return values, fmt.Errorf("invariance: %s: %w", c.Name(), err)
				}
				run := func(ctx context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
					o, err := prep.Run(ctx, fn.Name, tensor.CloneMap(in))
					return o.Outputs, err
				}
				base, err := run(ctx, inputs)
				if err != nil {
					c.Status, c.Message = harness.StatusSkip, "the function fails at batch "+fmt.Sprint(batch)+": "+err.Error()
				} else {
					vs, err := harness.CheckInvariance(ctx, irFn, inputs, base, run)
					if err != nil {
						return values, err
					}
					if len(vs) > 0 {
						var msgs []string
						for _, v := range vs {
							msgs = append(msgs, v.Detail)
						}
						if v := vs[0]; v.Base != nil && v.Other != nil {
							values[c.Name()] = fuzz.BitValues(v.Base, v.Other)
						}
						c.Status, c.Message = harness.StatusFail, "position: "+strings.Join(msgs, "\n")
					}
				}
				c.Timing.Execute = time.Since(start)
				res.Cases = append(res.Cases, c)
			}
			if prep != nil {
				prep.Close()
			}
		}
	}
	return values, nil
}

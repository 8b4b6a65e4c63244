package fuzz

import (
	"context"
	"slices"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// checkInvariance checks every executor against itself for position and
// batch invariance (harness.CheckInvariance) at the largest batch of each
// function: a KindPosition finding per function and executor whose
// result for a row depends on where the row sits. Functions whose
// results all mix rows (harness.RowIndependence) are skipped, as are runs
// that fail at the original batch. bases are the runs at the largest
// batch that Check has made already, on the same inputs, by function and
// executor; one that is missing is made here.
func (c *Checker) checkInvariance(ctx context.Context, f *program.File, p *ir.Program, execs []executor.Executor, preps []executor.Prepared, batches []int, seed uint64, bases map[baseKey]execResult) ([]Finding, int, error) {
	batch := slices.Max(batches)
	var found []Finding
	runs := 0
	for _, fn := range f.Funcs {
		irFn := p.Func(fn.Name)
		if irFn == nil {
			continue
		}
		if _, _, ok := harness.RowIndependence(irFn); !ok {
			continue
		}
		inputs, err := harness.GenerateInputs(f, fn, batch, seed, nil)
		if err != nil {
			return nil, runs, err
		}
		for i, e := range execs {
			if preps[i] == nil {
				continue
			}
			b, ok := bases[baseKey{fn.Name, e.Name()}]
			if !ok {
				b.out, b.err = safeRun(ctx, preps[i], fn.Name, inputs)
				runs++
				if ctx.Err() != nil {
					return nil, runs, ctx.Err()
				}
			}
			base, err := b.out, b.err
			if err != nil {
				continue
			}
			run := func(ctx context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
				runs++
				return safeRun(ctx, preps[i], fn.Name, in)
			}
			vs, err := harness.CheckInvariance(ctx, irFn, inputs, base, run)
			if err != nil {
				return nil, runs, err
			}
			if len(vs) == 0 {
				continue
			}
			v := vs[0]
			fd := Finding{Kind: KindPosition, Reference: e.Name(), Executor: e.Name(), Func: fn.Name, Batch: batch, Output: v.Output, Detail: v.Detail}
			if v.Base != nil && v.Other != nil {
				fd.Values = BitValues(v.Base, v.Other)
				fd.Shape = shapeClass(v.Other.Shape)
			}
			found = append(found, fd)
		}
	}
	return found, runs, nil
}

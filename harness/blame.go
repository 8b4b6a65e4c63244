package harness

import (
	"context"
	"math"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Blame says what a failed case's output mismatch is due to.
type Blame string

// The blames. A case that did not fail on its outputs has none.
const (
	// BlameFloat32: float32 itself. The reference evaluated once more with
	// every value rounded to float32 at each op (oracle.Options.Nearest, a
	// float32-emulating reference) misses the exact reference the same
	// way: at every mismatched element it too is out of tolerance, and the
	// executor's value is within tolerance of it (or both are the same NaN
	// or infinity). Example: Exp of 100 overflows to +Inf in float32.
	BlameFloat32 Blame = "float32-limit"
	// BlameExecutor: an executor disagreement. Some mismatched element is
	// not explained by float32 rounding.
	BlameExecutor Blame = "executor"
)

// roundedReference runs fn through the reference (the oracle) with
// float32 rounding to nearest at every op; nil when that run fails.
func roundedReference(ctx context.Context, ref executor.Rounder, fn *program.Func, inputs map[string]*tensor.Tensor) map[string]*tensor.Tensor {
	out, err := ref.RunRounded(ctx, fn, inputs)
	if err != nil {
		return nil
	}
	return out
}

// BlameOutputs is the blame rule on its own, as the runner applies it to
// a case that failed on its outputs: metrics are the outputs' comparison
// with want (the exact reference), got the executor's outputs, rounded the
// reference evaluated with every op rounded to float32 (nil gives
// BlameExecutor) and tols the outputs' tolerances. It returns
// BlameFloat32 only when, at every mismatched element, rounded misses
// want too and got agrees with rounded; "" when no output failed. Only
// the outputs judged not OK in metrics count.
// `rxeq selftest`'s canaries hold it to that.
func BlameOutputs(fn *program.Func, metrics []compare.OutputMetrics, want, got, rounded map[string]*tensor.Tensor, tols map[string]compare.Tolerance) Blame {
	if rounded == nil {
		return BlameExecutor
	}
	failed := false
	for _, m := range metrics {
		if m.OK {
			continue
		}
		failed = true
		if m.Problem != "" {
			return BlameExecutor // a shape or dtype problem is never float32's
		}
		var r *program.Var
		for _, v := range fn.Results {
			if v.Name == m.Name {
				r = v
			}
		}
		w, g, rd := want[m.Name], got[m.Name], rounded[m.Name]
		if r == nil || w == nil || g == nil || rd == nil || w.Len() != g.Len() || w.Len() != rd.Len() {
			return BlameExecutor
		}
		if r.Type.DType == ir.Int64 {
			for i := range w.I64 {
				if g.I64[i] != w.I64[i] && (rd.I64[i] != g.I64[i]) {
					return BlameExecutor
				}
			}
			continue
		}
		tol := tols[m.Name]
		wf, gf, rf := w.Float64s(), g.Float64s(), rd.Float64s()
		for i := range wf {
			if within(wf[i], gf[i], tol) {
				continue
			}
			if within(wf[i], rf[i], tol) || !within(rf[i], gf[i], tol) {
				return BlameExecutor
			}
		}
	}
	if !failed {
		return ""
	}
	return BlameFloat32
}

// within is the comparison's element rule: NaN matches NaN, an infinity
// only itself, finite values within tol.Allowed(want).
func within(want, got float64, tol compare.Tolerance) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return want == got
	}
	return math.Abs(got-want) <= tol.Allowed(want)
}

// Float32Limit reports whether the output mismatch of got against want,
// the exact reference's outputs for inputs (metrics: compare.Outputs of
// them under tols), is float32's: BlameOutputs gives BlameFloat32 with
// rounded the run of ref on inputs with every op rounded to float32, as
// rxeq run assigns it. An executor that cannot round (not the oracle)
// gives false, and so does a mismatch that is not on float outputs'
// values alone. Callers that judge a user's code on adversarial inputs
// (package sweep) use it to tell an input that overflows float32 itself
// from a bug.
func Float32Limit(ctx context.Context, ref executor.Executor, fn *program.Func, inputs, want, got map[string]*tensor.Tensor,
	metrics []compare.OutputMetrics, tols map[string]compare.Tolerance) bool {
	rd, ok := ref.(executor.Rounder)
	if !ok {
		return false
	}
	return BlameOutputs(fn, metrics, want, got, roundedReference(ctx, rd, fn, inputs), tols) == BlameFloat32
}

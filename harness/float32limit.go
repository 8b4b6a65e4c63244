package harness

import (
	"context"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// Float32Limit reports whether the output mismatch of got against want,
// the exact reference's outputs for inputs (metrics: compare.Outputs of
// them under tols), is float32's: the blame BlameFloat32, as rxeq run
// assigns it. ref is run once more on inputs with every op rounded to
// float32; an executor that cannot do that (not the oracle) gives false,
// and so does a mismatch that is not on float outputs' values alone.
// Callers that judge a user's code on adversarial inputs (package sweep)
// use it to tell an input that overflows float32 itself from a bug.
func Float32Limit(ctx context.Context, ref executor.Executor, fn *program.Func, inputs, want, got map[string]*tensor.Tensor,
	metrics []compare.OutputMetrics, tols map[string]compare.Tolerance) bool {
	rd, ok := ref.(executor.Rounder)
	if !ok {
		return false
	}
	rounded := roundedReference(ctx, rd, fn, inputs)
	return blameOutputs(fn, metrics, want, got, rounded, tols) == BlameFloat32
}

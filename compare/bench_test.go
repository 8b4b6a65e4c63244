package compare_test

import (
	"testing"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/tensor"
)

// BenchmarkCompareToOracle measures comparing a [128 8] probability output.
func BenchmarkCompareToOracle(b *testing.B) {
	want := tensor.NewFloat64(128, 8)
	for i := range want.F64 {
		want.F64[i] = float64(i%97) / 97
	}
	got := tensor.FromFloat32(f32(want.F64...), 128, 8)
	tol := compare.Tolerance{RTol: 1e-5, ATol: 1e-6}
	b.ReportAllocs()
	for b.Loop() {
		compare.ToOracle("probs", want, got, tol)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(want.Len()), "ns/element")
}

package oracle_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// BenchmarkOracle runs the DESIGN example (32 features, 8 classes, four
// rounds, Softmax, Argmax) and reports ns per row.
func BenchmarkOracle(b *testing.B) {
	f, err := program.Parse("design.rx", []byte(designSource))
	if err != nil {
		b.Fatal(err)
	}
	fn := f.Func("score_linear")
	for _, batch := range []int{1, 16, 128, 4096} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			seed := tensor.DeriveSeed(20261202, "bench")
			in := map[string]*tensor.Tensor{
				"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, seed, batch, 32),
				"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.3}, seed+1, 32, 8),
				"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, seed+2, 8),
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := oracle.Run(ctx, fn, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
		})
	}
}

package oracle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// benchDesign returns the DESIGN example's score_linear and its inputs
// at a batch.
func benchDesign(b *testing.B, batch int) (*program.Func, map[string]*tensor.Tensor) {
	f, err := program.Parse("design.rx", []byte(designSource))
	if err != nil {
		b.Fatal(err)
	}
	seed := tensor.DeriveSeed(20261202, "bench")
	return f.Func("score_linear"), map[string]*tensor.Tensor{
		"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, seed, batch, 32),
		"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.3}, seed+1, 32, 8),
		"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, seed+2, 8),
	}
}

// benchRun times RunWith(opts) and reports ns per row.
func benchRun(b *testing.B, fn *program.Func, in map[string]*tensor.Tensor, batch int, opts oracle.Options) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := oracle.RunWith(ctx, fn, in, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
}

// BenchmarkOracle runs the DESIGN example (32 features, 8 classes, four
// rounds, Softmax, Argmax) and reports ns per row.
func BenchmarkOracle(b *testing.B) {
	for _, batch := range []int{1, 16, 128, 4096} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			fn, in := benchDesign(b, batch)
			benchRun(b, fn, in, batch, oracle.Options{})
		})
	}
}

// BenchmarkNoise compares the exact run with a noise run on the DESIGN
// example at batch 128, in ns per row.
func BenchmarkNoise(b *testing.B) {
	const batch = 128
	fn, in := benchDesign(b, batch)
	b.Run("exact", func(b *testing.B) { benchRun(b, fn, in, batch, oracle.Options{}) })
	b.Run("noise", func(b *testing.B) {
		benchRun(b, fn, in, batch, oracle.Options{Noise: rand.New(rand.NewPCG(1, 2))})
	})
}

package oracle_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// BenchmarkNoise compares the exact run with a noise run on the DESIGN
// example (32 features, 8 classes) at batch 128, in ns per row.
func BenchmarkNoise(b *testing.B) {
	f, err := program.Parse("design.rx", []byte(designSource))
	if err != nil {
		b.Fatal(err)
	}
	fn := f.Func("score_linear")
	const batch = 128
	seed := tensor.DeriveSeed(20261202, "bench")
	in := map[string]*tensor.Tensor{
		"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, seed, batch, 32),
		"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.3}, seed+1, 32, 8),
		"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, seed+2, 8),
	}
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		opts oracle.Options
	}{
		{"exact", oracle.Options{}},
		{"noise", oracle.Options{Noise: rand.New(rand.NewPCG(1, 2))}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := oracle.RunWith(ctx, fn, in, mode.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/row")
		})
	}
}

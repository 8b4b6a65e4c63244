package fallback_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program"
)

// BenchmarkFallback runs the design's score_linear (32 features, 8
// classes, 4 rounds) through a prepared Interpreter and reports ns per row.
func BenchmarkFallback(b *testing.B) {
	f, err := program.Parse("score.rx", []byte(scoreLinearSrc))
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	it, err := fallback.New(p.Func("score_linear"))
	if err != nil {
		b.Fatal(err)
	}
	for _, batch := range []int{1, 16, 128, 4096} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			in := scoreInputs(batch, 7)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := it.Run(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
		})
	}
}

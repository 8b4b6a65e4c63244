package onnx_test

import (
	"testing"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

// BenchmarkExport writes the reference scenario's score_pipeline (a Loop
// holding an If, eight inputs) as a model.
func BenchmarkExport(b *testing.B) {
	f, err := scenarios.Lookup("reference-scoring")
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := onnx.Export(p, "score_pipeline", onnx.Meta{Source: f.Name}); err != nil {
			b.Fatal(err)
		}
	}
}

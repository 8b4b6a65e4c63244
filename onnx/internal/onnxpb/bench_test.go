package onnxpb_test

import (
	"testing"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

// BenchmarkUnmarshalModel decodes a model with a float initializer of a
// million elements (4 MB of raw data) and a small graph.
func BenchmarkUnmarshalModel(b *testing.B) {
	m := rich()
	m.Graph.Initializer = append(m.Graph.Initializer, &onnxpb.Tensor{Dims: []int64{1 << 20}, DataType: onnxpb.TypeFloat, RawData: make([]byte, 4<<20)})
	enc := m.Marshal()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := onnxpb.UnmarshalModel(enc); err != nil {
			b.Fatal(err)
		}
	}
}

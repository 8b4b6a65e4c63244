package onnxpb_test

import (
	"errors"
	"testing"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

// FuzzUnmarshalModel: any bytes decode or fail with ErrMalformed, and what
// decodes encodes to bytes that decode to the same encoding; the same
// bytes read as a TensorProto decode or fail likewise, and its accessors
// return elements or ErrTensor.
func FuzzUnmarshalModel(f *testing.F) {
	f.Add(rich().Marshal())
	f.Add([]byte{})
	f.Add((&onnxpb.Tensor{Dims: []int64{2}, DataType: onnxpb.TypeFloat, RawData: make([]byte, 8)}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		if tp, err := onnxpb.UnmarshalTensor(b); err != nil {
			if !errors.Is(err, onnxpb.ErrMalformed) {
				t.Fatalf("tensor: error of the wrong kind: %v", err)
			}
		} else {
			if _, err := tp.Float32s(1 << 20); err != nil && !errors.Is(err, onnxpb.ErrTensor) {
				t.Fatalf("Float32s: error of the wrong kind: %v", err)
			}
			if _, err := tp.Int64s(1 << 20); err != nil && !errors.Is(err, onnxpb.ErrTensor) {
				t.Fatalf("Int64s: error of the wrong kind: %v", err)
			}
		}
		m, err := onnxpb.UnmarshalModel(b)
		if err != nil {
			if !errors.Is(err, onnxpb.ErrMalformed) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
			return
		}
		enc := m.Marshal()
		m2, err := onnxpb.UnmarshalModel(enc)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if string(m2.Marshal()) != string(enc) {
			t.Fatalf("encoding is not stable")
		}
	})
}

package onnxpb_test

import (
	"errors"
	"testing"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

// FuzzUnmarshalModel: any bytes decode or fail with ErrMalformed, and what
// decodes encodes to bytes that decode to the same encoding.
func FuzzUnmarshalModel(f *testing.F) {
	f.Add(rich().Marshal())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
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

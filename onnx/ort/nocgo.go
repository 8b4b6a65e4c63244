//go:build !cgo

package ort

// Without cgo there is no binding: this file stands in for ort.go and
// log.go, and Open fails with ErrUnavailable.

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/tensor"
)

// withCgo reports whether this build has the binding.
const withCgo = false

// APIVersion is the OrtApi version rxeq requests.
const APIVersion = 17

// Library is a loaded ONNX Runtime library; without cgo none is.
type Library struct{}

// Open fails: rxeq was built without cgo.
func Open(path string) (*Library, error) {
	return nil, fmt.Errorf("%w: rxeq was built without cgo", ErrUnavailable)
}

// Path returns "".
func (*Library) Path() string { return "" }

// Version returns "".
func (*Library) Version() string { return "" }

// Session is a model loaded into ONNX Runtime; without cgo none is.
type Session struct{}

// NewSession fails: rxeq was built without cgo.
func (*Library) NewSession(model []byte, inputs, outputs []string, opts SessionOptions) (*Session, error) {
	return nil, fmt.Errorf("%w: rxeq was built without cgo", ErrUnavailable)
}

// Run fails.
func (*Session) Run(ctx context.Context, inputs, outputs []*tensor.Tensor) error { return ErrClosed }

// Close does nothing.
func (*Session) Close() error { return nil }

// Sessions returns 0.
func Sessions() int { return 0 }

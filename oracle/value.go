package oracle

import (
	"fmt"

	"github.com/rextio/rxeq/tensor"
)

// kind is the dynamic type of a value.
type kind uint8

const (
	floatKind kind = iota + 1 // a float64 tensor (the language's float32)
	intKind                   // an int64 tensor or scalar
	boolKind                  // a condition
)

func (k kind) String() string {
	switch k {
	case floatKind:
		return "float"
	case intKind:
		return "int64"
	case boolKind:
		return "bool"
	}
	return "invalid"
}

// value is an evaluated expression. Values are never mutated after they are
// built, so variables may share them freely.
type value struct {
	kind  kind
	shape []int     // nil for a scalar
	f     []float64 // floatKind: len == product of shape
	i     []int64   // intKind: len == product of shape
	b     bool      // boolKind
}

func floatValue(shape []int, data []float64) *value {
	return &value{kind: floatKind, shape: shape, f: data}
}

func intScalar(v int64) *value { return &value{kind: intKind, i: []int64{v}} }

func boolValue(b bool) *value { return &value{kind: boolKind, b: b} }

// fromTensor turns a bound input into a value: float32 is widened to
// float64, int64 copied (so results never alias the caller's inputs).
func fromTensor(t *tensor.Tensor) (*value, error) {
	shape := append([]int(nil), t.Shape...)
	switch t.DType {
	case tensor.Float32, tensor.Float64:
		return floatValue(shape, t.Float64s()), nil
	case tensor.Int64:
		return &value{kind: intKind, shape: shape, i: append([]int64(nil), t.I64...)}, nil
	}
	return nil, fmt.Errorf("input of dtype %s", t.DType)
}

// toTensor copies a value into a result tensor.
func (v *value) toTensor() (*tensor.Tensor, error) {
	shape := append([]int(nil), v.shape...)
	switch v.kind {
	case floatKind:
		return tensor.FromFloat64(append([]float64(nil), v.f...), shape...), nil
	case intKind:
		return tensor.FromInt64(append([]int64(nil), v.i...), shape...), nil
	}
	return nil, fmt.Errorf("a %s value cannot be a result", v.kind)
}

// scalarInt returns the int64 of a rank-0 int value.
func (v *value) scalarInt() (int64, error) {
	if v.kind != intKind || len(v.shape) != 0 || len(v.i) != 1 {
		return 0, fmt.Errorf("want an int64 scalar, have %s%v", v.kind, v.shape)
	}
	return v.i[0], nil
}

// asBool returns the bool of a condition.
func (v *value) asBool() (bool, error) {
	if v.kind != boolKind {
		return false, fmt.Errorf("want a bool, have %s%v", v.kind, v.shape)
	}
	return v.b, nil
}

// asFloat checks that v is a float tensor.
func (v *value) asFloat() (*value, error) {
	if v.kind != floatKind || len(v.f) != tensor.NumElements(v.shape) {
		return nil, fmt.Errorf("want a float tensor, have %s%v", v.kind, v.shape)
	}
	return v, nil
}

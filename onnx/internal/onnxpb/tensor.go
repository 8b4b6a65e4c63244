package onnxpb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrTensor is the kind of the errors the tensor accessors return for a
// TensorProto whose data does not match its dims and data type.
var ErrTensor = errors.New("bad ONNX tensor")

// UnmarshalTensor decodes a TensorProto, like the input_N.pb and
// output_N.pb files of ONNX's node tests, with the same guarantees as
// UnmarshalModel.
func UnmarshalTensor(b []byte) (*Tensor, error) {
	return tensorBody(newDecoder(b, "TensorProto"))
}

// Marshal encodes the tensor as a TensorProto.
func (t *Tensor) Marshal() []byte {
	var e encoder
	t.encode(&e)
	return e.b
}

// NumElements returns the number of elements the dims describe: an error
// for a negative dim or a product above maxElems (or overflowing).
func (t *Tensor) NumElements(maxElems int64) (int64, error) {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return 0, fmt.Errorf("%w %q: negative dimension in %v", ErrTensor, t.Name, t.Dims)
		}
		if d != 0 && n > maxElems/d {
			return 0, fmt.Errorf("%w %q: dims %v hold more than %d elements", ErrTensor, t.Name, t.Dims, maxElems)
		}
		n *= d
	}
	return n, nil
}

// checkData checks that the tensor holds its data in the message (not
// in an external file), of type want, with n elements.
func (t *Tensor) checkData(want int32, maxElems int64) (int64, error) {
	if t.DataType != want {
		return 0, fmt.Errorf("%w %q: data type %d, want %d", ErrTensor, t.Name, t.DataType, want)
	}
	if t.DataLocation != 0 || len(t.ExternalData) > 0 {
		return 0, fmt.Errorf("%w %q: data in an external file is not supported", ErrTensor, t.Name)
	}
	return t.NumElements(maxElems)
}

// Float32s returns the elements of a FLOAT tensor, from raw_data (little
// endian) or float_data, checking that their number matches the dims.
func (t *Tensor) Float32s(maxElems int64) ([]float32, error) {
	n, err := t.checkData(TypeFloat, maxElems)
	if err != nil {
		return nil, err
	}
	if t.RawData != nil {
		if int64(len(t.RawData)) != 4*n || len(t.FloatData) > 0 {
			return nil, fmt.Errorf("%w %q: %d bytes of raw data for %d float32 elements", ErrTensor, t.Name, len(t.RawData), n)
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.RawData[4*i:]))
		}
		return out, nil
	}
	if int64(len(t.FloatData)) != n {
		return nil, fmt.Errorf("%w %q: %d float_data elements, dims %v need %d", ErrTensor, t.Name, len(t.FloatData), t.Dims, n)
	}
	return append([]float32(nil), t.FloatData...), nil
}

// Int64s returns the elements of an INT64 tensor, from raw_data (little
// endian) or int64_data, checking that their number matches the dims.
func (t *Tensor) Int64s(maxElems int64) ([]int64, error) {
	n, err := t.checkData(TypeInt64, maxElems)
	if err != nil {
		return nil, err
	}
	if t.RawData != nil {
		if int64(len(t.RawData)) != 8*n || len(t.Int64Data) > 0 {
			return nil, fmt.Errorf("%w %q: %d bytes of raw data for %d int64 elements", ErrTensor, t.Name, len(t.RawData), n)
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.RawData[8*i:]))
		}
		return out, nil
	}
	if int64(len(t.Int64Data)) != n {
		return nil, fmt.Errorf("%w %q: %d int64_data elements, dims %v need %d", ErrTensor, t.Name, len(t.Int64Data), t.Dims, n)
	}
	return append([]int64(nil), t.Int64Data...), nil
}

// Package onnxpb is a hand-written proto2 wire encoder and decoder for the
// ONNX messages rxeq reads and writes (onnx/onnx.proto of ONNX 1.12, IR
// version 8): ModelProto, GraphProto, NodeProto, AttributeProto,
// TensorProto, ValueInfoProto, TypeProto, TensorShapeProto,
// OperatorSetIdProto and StringStringEntryProto.
//
// The encoder writes fields in field-number order, as the protobuf
// libraries do, packed where onnx.proto says [packed = true] and unpacked
// otherwise, so its bytes read like those onnx.helper writes. Scalar fields
// holding their zero value are left out, except where onnx.proto gives the
// zero a meaning (an attribute's value of its declared type, a tensor's
// data type, a dimension's dim_value).
//
// The decoder accepts any valid encoding (packed or not, fields in any
// order, unknown fields skipped) and is written for hostile bytes: every
// length is checked against what is left of the input before anything is
// allocated; what decoding allocates is charged to a budget of
// AllocFactor bytes per input byte (plus AllocSlack), so no input, however
// it packs empty messages or one-byte varints, makes it allocate more
// than that; nesting is bounded (MaxDepth); an error names the message and
// field where decoding stopped and wraps ErrMalformed. No input panics.
package onnxpb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Wire types of the protobuf encoding.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// ErrMalformed is the kind of every decoding error.
var ErrMalformed = errors.New("malformed ONNX protobuf")

// The allocation budget of a decoding: AllocFactor bytes per input byte,
// plus AllocSlack. A message costs messageCost, a repeated number its
// size, a string or bytes field its length plus a header. Real models
// stay far below it (a float tensor costs its own size; a node a few
// times its encoding).
const (
	AllocFactor = 64
	AllocSlack  = 1 << 20
	messageCost = 256
)

// MaxDepth bounds the nesting of messages the decoder follows (a graph in
// an attribute of a node of a graph … counts one level per message).
const MaxDepth = 100

// encoder appends protobuf fields to a byte slice.
type encoder struct{ b []byte }

func (e *encoder) varint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) tag(field, wt int) { e.varint(uint64(field)<<3 | uint64(wt)) }

// int64Field writes an int64 (or int32, sign-extended, as protobuf does).
func (e *encoder) int64Field(field int, v int64) {
	e.tag(field, wireVarint)
	e.varint(uint64(v))
}

func (e *encoder) int64Opt(field int, v int64) {
	if v != 0 {
		e.int64Field(field, v)
	}
}

func (e *encoder) bytesField(field int, b []byte) {
	e.tag(field, wireBytes)
	e.varint(uint64(len(b)))
	e.b = append(e.b, b...)
}

func (e *encoder) stringField(field int, s string) {
	e.tag(field, wireBytes)
	e.varint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) stringOpt(field int, s string) {
	if s != "" {
		e.stringField(field, s)
	}
}

func (e *encoder) float32Field(field int, v float32) {
	e.tag(field, wireFixed32)
	e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(v))
}

// message writes a nested message encoded by fn.
func (e *encoder) message(field int, fn func(*encoder)) {
	var sub encoder
	fn(&sub)
	e.bytesField(field, sub.b)
}

// decoder reads protobuf fields from a byte slice.
type decoder struct {
	b     []byte
	depth int
	msg   string // the message being read, for errors
	left  *int64 // the allocation budget left, shared by nested decoders
}

func newDecoder(b []byte, msg string) *decoder {
	left := int64(len(b))*AllocFactor + AllocSlack
	return &decoder{b: b, msg: msg, left: &left}
}

// charge takes n bytes from the allocation budget.
func (d *decoder) charge(n int) error {
	if *d.left -= int64(n); *d.left < 0 {
		return d.errorf("decoding would allocate more than %d bytes per input byte", AllocFactor)
	}
	return nil
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformed, d.msg, fmt.Sprintf(format, args...))
}

func (d *decoder) done() bool { return len(d.b) == 0 }

func (d *decoder) varint() (uint64, error) {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, d.errorf("bad varint")
	}
	d.b = d.b[n:]
	return v, nil
}

// next reads a field's tag.
func (d *decoder) next() (field, wt int, err error) {
	v, err := d.varint()
	if err != nil {
		return 0, 0, err
	}
	if v>>3 == 0 || v>>3 > math.MaxInt32 {
		return 0, 0, d.errorf("bad field number %d", v>>3)
	}
	return int(v >> 3), int(v & 7), nil
}

// bytes reads a length-delimited field's payload (not copied).
func (d *decoder) bytes() ([]byte, error) {
	n, err := d.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)) {
		return nil, d.errorf("length %d exceeds the %d bytes left", n, len(d.b))
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out, nil
}

func (d *decoder) fixed32() (uint32, error) {
	if len(d.b) < 4 {
		return 0, d.errorf("truncated fixed32")
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v, nil
}

func (d *decoder) fixed64() (uint64, error) {
	if len(d.b) < 8 {
		return 0, d.errorf("truncated fixed64")
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v, nil
}

// skip skips a field of wire type wt.
func (d *decoder) skip(wt int) error {
	var err error
	switch wt {
	case wireVarint:
		_, err = d.varint()
	case wireFixed64:
		_, err = d.fixed64()
	case wireBytes:
		_, err = d.bytes()
	case wireFixed32:
		_, err = d.fixed32()
	default:
		err = d.errorf("unsupported wire type %d", wt)
	}
	return err
}

// sub returns a decoder for a nested message of the given name.
func (d *decoder) sub(name string) (*decoder, error) {
	if d.depth+1 > MaxDepth {
		return nil, d.errorf("messages nested deeper than %d", MaxDepth)
	}
	b, err := d.bytes()
	if err != nil {
		return nil, err
	}
	if err := d.charge(messageCost); err != nil {
		return nil, err
	}
	return &decoder{b: b, depth: d.depth + 1, msg: name, left: d.left}, nil
}

func (d *decoder) expect(field, wt, want int) error {
	if wt != want {
		return d.errorf("field %d has wire type %d, want %d", field, wt, want)
	}
	return nil
}

func (d *decoder) int64(field, wt int) (int64, error) {
	if err := d.expect(field, wt, wireVarint); err != nil {
		return 0, err
	}
	v, err := d.varint()
	return int64(v), err
}

// int32 reads an int32 field (encoded sign-extended to 64 bits, or, from
// lenient writers, truncated).
func (d *decoder) int32(field, wt int) (int32, error) {
	v, err := d.int64(field, wt)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxUint32 {
		return 0, d.errorf("field %d: %d does not fit an int32", field, v)
	}
	return int32(v), nil
}

func (d *decoder) string(field, wt int) (string, error) {
	if err := d.expect(field, wt, wireBytes); err != nil {
		return "", err
	}
	b, err := d.bytes()
	if err == nil {
		err = d.charge(len(b) + 16)
	}
	return string(b), err
}

func (d *decoder) bytesCopy(field, wt int) ([]byte, error) {
	if err := d.expect(field, wt, wireBytes); err != nil {
		return nil, err
	}
	b, err := d.bytes()
	if err == nil {
		err = d.charge(len(b) + 24)
	}
	if err != nil {
		return nil, err
	}
	return append([]byte{}, b...), nil
}

func (d *decoder) float32(field, wt int) (float32, error) {
	if err := d.expect(field, wt, wireFixed32); err != nil {
		return 0, err
	}
	v, err := d.fixed32()
	return math.Float32frombits(v), err
}

// int64s appends a repeated varint field, packed or not.
func (d *decoder) int64s(dst []int64, field, wt int) ([]int64, error) {
	if err := d.charge(8); err != nil {
		return nil, err
	}
	if wt == wireVarint {
		v, err := d.varint()
		return append(dst, int64(v)), err
	}
	if err := d.expect(field, wt, wireBytes); err != nil {
		return nil, err
	}
	b, err := d.bytes()
	if err != nil {
		return nil, err
	}
	p := &decoder{b: b, msg: d.msg, left: d.left}
	for !p.done() {
		v, err := p.varint()
		if err == nil {
			err = p.charge(8)
		}
		if err != nil {
			return nil, err
		}
		dst = append(dst, int64(v))
	}
	return dst, nil
}

// fixed32s appends a repeated fixed32 field (float), packed or not.
func (d *decoder) fixed32s(dst []uint32, field, wt int) ([]uint32, error) {
	if wt == wireFixed32 {
		v, err := d.fixed32()
		if err == nil {
			err = d.charge(8)
		}
		return append(dst, v), err
	}
	if err := d.expect(field, wt, wireBytes); err != nil {
		return nil, err
	}
	b, err := d.bytes()
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, d.errorf("field %d: packed fixed32 of %d bytes", field, len(b))
	}
	if err := d.charge(2 * len(b)); err != nil {
		return nil, err
	}
	for i := 0; i < len(b); i += 4 {
		dst = append(dst, binary.LittleEndian.Uint32(b[i:]))
	}
	return dst, nil
}

// fixed64s appends a repeated fixed64 field (double, uint64), packed or not.
func (d *decoder) fixed64s(dst []uint64, field, wt int) ([]uint64, error) {
	if wt == wireFixed64 {
		v, err := d.fixed64()
		if err == nil {
			err = d.charge(16)
		}
		return append(dst, v), err
	}
	if err := d.expect(field, wt, wireBytes); err != nil {
		return nil, err
	}
	b, err := d.bytes()
	if err != nil {
		return nil, err
	}
	if len(b)%8 != 0 {
		return nil, d.errorf("field %d: packed fixed64 of %d bytes", field, len(b))
	}
	if err := d.charge(2 * len(b)); err != nil {
		return nil, err
	}
	for i := 0; i < len(b); i += 8 {
		dst = append(dst, binary.LittleEndian.Uint64(b[i:]))
	}
	return dst, nil
}

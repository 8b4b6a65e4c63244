package onnxpb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

// field appends a length-delimited field.
func field(b []byte, num int, payload []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

var _ = Describe("Hostile bytes", func() {
	It("never panic: every prefix and thousands of mutations of a valid model decode or fail with ErrMalformed", func() {
		valid := rich().Marshal()
		for n := range len(valid) {
			_, err := onnxpb.UnmarshalModel(valid[:n])
			if err != nil {
				Expect(errors.Is(err, onnxpb.ErrMalformed)).To(BeTrue(), "prefix %d: %v", n, err)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 5000 {
			b := bytes.Clone(valid)
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = byte(rng.UintN(256))
			}
			_, err := onnxpb.UnmarshalModel(b)
			if err != nil {
				Expect(errors.Is(err, onnxpb.ErrMalformed)).To(BeTrue(), "%v", err)
			}
		}
	})

	It("refuse a length beyond the input, a group, a bad varint and nesting deeper than MaxDepth, naming the message", func() {
		for _, b := range [][]byte{
			{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}, // graph (7) of length 2^32-1
			{0x3b},                               // field 7 as a start group
			{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // an 11-byte varint
			{0x00}, // field number 0
		} {
			_, err := onnxpb.UnmarshalModel(b)
			Expect(err).To(MatchError(onnxpb.ErrMalformed), "% x", b)
		}
		// A graph in an attribute of a node of a graph …, deeper than MaxDepth.
		g := []byte{}
		for range onnxpb.MaxDepth {
			attr := field(nil, 6, g)    // AttributeProto.g
			node := field(nil, 5, attr) // NodeProto.attribute
			g = field(nil, 1, node)     // GraphProto.node
		}
		_, err := onnxpb.UnmarshalModel(field(nil, 7, g))
		Expect(err).To(MatchError(ContainSubstring("nested deeper than")))
		Expect(err).To(MatchError(onnxpb.ErrMalformed))
	})

	It("allocate at most a bounded multiple of the input, however it packs empty messages or one-byte varints", func() {
		// A node with 300,000 empty attributes: 2 bytes each on the wire.
		attrs := bytes.Repeat([]byte{0x2a, 0x00}, 300_000)
		manyEmpty := field(nil, 7, field(nil, 1, attrs))
		// A tensor with a million one-byte varints in its packed int64_data.
		varints := field(nil, 7, field(nil, 5, field(nil, 7, bytes.Repeat([]byte{0x01}, 1_000_000))))
		for _, b := range [][]byte{manyEmpty, varints} {
			limit := uint64(3 * (onnxpb.AllocFactor*len(b) + onnxpb.AllocSlack))
			var err error
			Expect(allocated(func() { _, err = onnxpb.UnmarshalModel(b) })).To(BeNumerically("<", limit))
			if err != nil {
				Expect(err).To(MatchError(onnxpb.ErrMalformed))
			}
		}
	})
})

package external

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
)

// frame builds a frame from a header text and payload bytes.
func frame(header string, payload ...byte) []byte {
	var b bytes.Buffer
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(header)))
	b.Write(n[:])
	b.WriteString(header)
	b.Write(payload)
	return b.Bytes()
}

func readOne(b []byte) (*inMsg, error) {
	return readFrame(bufio.NewReader(bytes.NewReader(b)), 1<<20, nil)
}

var _ = Describe("the executor protocol's frames", func() {
	It("carries every bit of a tensor, NaN payloads and signed zeros included", func() {
		t := tensor.FromFloat32([]float32{math.Float32frombits(0x7fc00123), float32(math.Copysign(0, -1)), float32(math.Inf(-1)), 1.5}, 2, 2)
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		Expect(writeFrame(w, map[string]any{"type": "result", "id": 1,
			"tensors": []wireTensor{{Name: "y", DType: "float32", Shape: []int{2, 2}, NBytes: 16}}}, leBytes(t))).To(Succeed())
		m, err := readOne(b.Bytes())
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Type).To(Equal("result"))
		Expect(*m.ID).To(Equal(uint64(1)))
		got := m.decoded[0]
		Expect(got.Shape).To(Equal([]int{2, 2}))
		for i := range t.F32 {
			Expect(math.Float32bits(got.F32[i])).To(Equal(math.Float32bits(t.F32[i])))
		}
	})

	It("skips the bytes of a dtype it does not know and keeps reading", func() {
		b := frame(`{"type":"result","id":3,"tensors":[{"name":"c","dtype":"int32","shape":[2],"nbytes":8},{"name":"d","dtype":"int64","shape":[],"nbytes":8}]}`,
			1, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0)
		m, err := readOne(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.decoded[0]).To(BeNil())
		Expect(m.decoded[1].I64).To(Equal([]int64{7}))
	})

	DescribeTable("calls a malformed frame a protocol violation, saying what it saw",
		func(b []byte, want string) {
			_, err := readOne(b)
			Expect(isProtocolError(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("text", []byte("hello world\n"), `garbage on stdout: text "hello world\n" is not a frame (a header length of 1819043176 bytes; the limit is 16777216). Is something printing to stdout?`),
		Entry("bytes that are not UTF-8", []byte{0xff, 0xff, 0xff, 0xff}, `garbage on stdout: bytes "\xff\xff\xff\xff" is not a frame`),
		Entry("a zero length", []byte{0, 0, 0, 0, '{'}, `bytes "\x00\x00\x00\x00{" is not a frame (a header length of 0 bytes`),
		Entry("not JSON", frame("hi there"), "is not a JSON message"),
		Entry("two JSON values", frame(`{"type":"a"} {}`), "more than one JSON value"),
		Entry("no type", frame(`{"id":1}`), `a message without a "type"`),
		Entry("nbytes not the shape's", frame(`{"type":"result","tensors":[{"name":"y","dtype":"float32","shape":[2],"nbytes":4}]}`), `tensor "y": float32 shape [2] takes 8 bytes, the header says nbytes 4`),
		Entry("a negative dimension", frame(`{"type":"result","tensors":[{"name":"y","dtype":"float32","shape":[-1],"nbytes":4}]}`), "negative dimension"),
		Entry("more than the payload limit", frame(`{"type":"result","tensors":[{"name":"y","dtype":"x","shape":[],"nbytes":2000000}]}`), "add up to more than 1048576 bytes"),
	)

	It("returns a cut frame as an I/O error, which the caller tells from garbage", func() {
		b := frame(`{"type":"result","tensors":[{"name":"y","dtype":"float32","shape":[2],"nbytes":8}]}`, 1, 2, 3)
		_, err := readOne(b)
		Expect(err).To(HaveOccurred())
		Expect(isProtocolError(err)).To(BeFalse())
	})
})

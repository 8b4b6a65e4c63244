package reports_test

import (
	"bytes"
	"errors"
	"math"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
	"github.com/rextio/rxeq/tensor"
)

// npyHeader builds the expected 128-byte preamble by hand: magic, version
// 1.0, header length 118 (0x76, little-endian), the dict, space padding to
// byte 127 and '\n'.
func npyHeader(dict string) []byte {
	h := []byte("\x93NUMPY\x01\x00\x76\x00" + dict)
	h = append(h, bytes.Repeat([]byte(" "), 127-len(h))...)
	return append(h, '\n')
}

var _ = Describe("NPY", func() {
	It("writes a tiny float32 tensor byte for byte", func() {
		var buf bytes.Buffer
		Expect(reports.WriteNPY(&buf, tensor.FromFloat32([]float32{1, -2}, 2))).To(Succeed())
		dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"             // 57 bytes: 10 + 57 + 60 spaces + 1 = 128
		want := append(npyHeader(dict), 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0) // 1.0f, -2.0f
		Expect(buf.Bytes()).To(Equal(want))
		Expect(strings.Count(buf.String()[10:128], " ")).To(Equal(60 + 6)) // padding plus the dict's own spaces
	})

	It("writes an int64 scalar with shape () and a float64 matrix with shape (2, 3)", func() {
		var buf bytes.Buffer
		Expect(reports.WriteNPY(&buf, tensor.Scalar(5))).To(Succeed())
		want := append(npyHeader("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"), 5, 0, 0, 0, 0, 0, 0, 0)
		Expect(buf.Bytes()).To(Equal(want))

		buf.Reset()
		Expect(reports.WriteNPY(&buf, tensor.FromFloat64([]float64{0.5, 0, 0, 0, 0, -1}, 2, 3))).To(Succeed())
		b := buf.Bytes()
		Expect(b[:128]).To(Equal(npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }")))
		Expect(b).To(HaveLen(128 + 6*8))
		Expect(b[128:136]).To(Equal([]byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f})) // 0.5
		Expect(b[168:176]).To(Equal([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0xbf})) // -1.0
	})

	It("starts the data at a multiple of 64 bytes for long shapes", func() {
		var buf bytes.Buffer
		t := tensor.NewFloat32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 1, 1, 1)
		Expect(reports.WriteNPY(&buf, t)).To(Succeed())
		Expect((buf.Len() - 4*t.Len()) % 64).To(BeZero())
		Expect(buf.Bytes()[buf.Len()-4*t.Len()-1]).To(Equal(byte('\n')))
	})

	It("round-trips every dtype bit for bit", func() {
		nanBits := math.Float32frombits(0x7fc00123)
		for _, t := range []*tensor.Tensor{
			tensor.FromFloat32([]float32{1.5, nanBits, float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 1e-45, 3}, 3, 2),
			tensor.FromFloat64([]float64{math.Pi, -math.MaxFloat64}, 2, 1),
			tensor.FromInt64([]int64{math.MinInt64, -1, math.MaxInt64}, 3),
			tensor.NewFloat32(0, 4),
		} {
			var buf bytes.Buffer
			Expect(reports.WriteNPY(&buf, t)).To(Succeed())
			back, err := reports.ReadNPY(&buf)
			Expect(err).NotTo(HaveOccurred())
			Expect(back.DType).To(Equal(t.DType))
			Expect(back.Shape).To(Equal(t.Shape))
			switch t.DType {
			case tensor.Float32:
				for i := range t.F32 {
					Expect(math.Float32bits(back.F32[i])).To(Equal(math.Float32bits(t.F32[i])))
				}
			case tensor.Float64:
				Expect(back.F64).To(Equal(t.F64))
			case tensor.Int64:
				Expect(back.I64).To(Equal(t.I64))
			}
		}
	})

	It("refuses what it cannot represent or read", func() {
		bad := &tensor.Tensor{DType: tensor.Float32, Shape: []int{3}, F32: []float32{1}}
		Expect(errors.Is(reports.WriteNPY(&bytes.Buffer{}, bad), reports.ErrNPY)).To(BeTrue())

		read := func(s string) error { _, err := reports.ReadNPY(strings.NewReader(s)); return err }
		Expect(read("NUMPY!!!")).To(MatchError(ContainSubstring("bad magic")))
		big := string(npyHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }")) + "\x3f\x80\x00\x00"
		Expect(read(big)).To(MatchError(ContainSubstring(`unsupported dtype ">f4"`)))
		fortran := string(npyHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }")) + "\x00\x00\x80\x3f"
		Expect(read(fortran)).To(MatchError(ContainSubstring("Fortran-order")))
		short := string(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")) + "\x00\x00\x80\x3f"
		err := read(short)
		Expect(errors.Is(err, reports.ErrNPY)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("reading 2 elements of shape [2]")))
	})
})

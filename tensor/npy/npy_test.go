package npy_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// header builds the expected 128-byte preamble by hand: magic, version
// 1.0, header length 118 (0x76, little-endian), the dict, space padding to
// byte 127 and '\n'.
func header(dict string) []byte {
	h := []byte("\x93NUMPY\x01\x00\x76\x00" + dict)
	h = append(h, bytes.Repeat([]byte(" "), 127-len(h))...)
	return append(h, '\n')
}

func read(b []byte) (*tensor.Tensor, error) { return npy.Read(bytes.NewReader(b)) }

func expectBits(got, want *tensor.Tensor) {
	GinkgoHelper()
	Expect(got.DType).To(Equal(want.DType))
	Expect(got.Shape).To(Equal(want.Shape))
	switch want.DType {
	case tensor.Float32:
		Expect(got.F32).To(HaveLen(len(want.F32)))
		for i := range want.F32 {
			Expect(math.Float32bits(got.F32[i])).To(Equal(math.Float32bits(want.F32[i])), "element %d", i)
		}
	case tensor.Float64:
		Expect(got.F64).To(HaveLen(len(want.F64)))
		for i := range want.F64 {
			Expect(math.Float64bits(got.F64[i])).To(Equal(math.Float64bits(want.F64[i])), "element %d", i)
		}
	case tensor.Int64:
		Expect(got.I64).To(Equal(want.I64))
	}
}

var _ = Describe("Write", func() {
	It("writes a tiny float32 tensor byte for byte", func() {
		var buf bytes.Buffer
		Expect(npy.Write(&buf, tensor.FromFloat32([]float32{1, -2}, 2))).To(Succeed())
		dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
		want := append(header(dict), 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0) // 1.0f, -2.0f
		Expect(buf.Bytes()).To(Equal(want))
	})

	It("writes an int64 scalar with shape () and a float64 matrix with shape (2, 3)", func() {
		var buf bytes.Buffer
		Expect(npy.Write(&buf, tensor.Scalar(5))).To(Succeed())
		Expect(buf.Bytes()).To(Equal(append(header("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"), 5, 0, 0, 0, 0, 0, 0, 0)))

		buf.Reset()
		Expect(npy.Write(&buf, tensor.FromFloat64([]float64{0.5, 0, 0, 0, 0, -1}, 2, 3))).To(Succeed())
		b := buf.Bytes()
		Expect(b[:128]).To(Equal(header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }")))
		Expect(b).To(HaveLen(128 + 6*8))
		Expect(b[128:136]).To(Equal([]byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f})) // 0.5
		Expect(b[168:176]).To(Equal([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0xbf})) // -1.0
	})

	It("starts the data at a multiple of 64 bytes for long shapes", func() {
		var buf bytes.Buffer
		t := tensor.NewFloat32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 1, 1, 1)
		Expect(npy.Write(&buf, t)).To(Succeed())
		Expect((buf.Len() - 4*t.Len()) % 64).To(BeZero())
		Expect(buf.Bytes()[buf.Len()-4*t.Len()-1]).To(Equal(byte('\n')))
	})

	It("refuses a malformed tensor", func() {
		bad := &tensor.Tensor{DType: tensor.Float32, Shape: []int{3}, F32: []float32{1}}
		Expect(errors.Is(npy.Write(&bytes.Buffer{}, bad), npy.ErrUnsupported)).To(BeTrue())
	})
})

var _ = Describe("Read", func() {
	It("round-trips every dtype bit for bit, through more than one read buffer", func() {
		nanBits := math.Float32frombits(0x7fc00123)
		big := tensor.NewFloat32(3000, 17)
		for i := range big.F32 {
			big.F32[i] = float32(i) * 0.37
		}
		for _, t := range []*tensor.Tensor{
			tensor.FromFloat32([]float32{1.5, nanBits, float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 1e-45, 3}, 3, 2),
			tensor.FromFloat64([]float64{math.Pi, -math.MaxFloat64}, 2, 1),
			tensor.FromInt64([]int64{math.MinInt64, -1, math.MaxInt64}, 3),
			tensor.Scalar(-7),
			tensor.NewFloat32(0, 4),
			tensor.NewFloat32(2, 0, 3),
			big,
		} {
			var buf bytes.Buffer
			Expect(npy.Write(&buf, t)).To(Succeed())
			back, err := read(buf.Bytes())
			Expect(err).NotTo(HaveOccurred())
			expectBits(back, t)
		}
	})

	It("reads version 2.0 headers, double quotes and keys in any order", func() {
		dict := `{"shape": (2,), "fortran_order": False, "descr": "<f4"}`
		pre := []byte("\x93NUMPY\x02\x00")
		pre = append(pre, byte(len(dict)+1), 0, 0, 0)
		b := append(append(pre, dict+"\n"...), 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40)
		t, err := read(b)
		Expect(err).NotTo(HaveOccurred())
		expectBits(t, tensor.FromFloat32([]float32{1, 2}, 2))
	})

	DescribeTable("refuses what it cannot use, saying what is wrong",
		func(b []byte, kind error, text string) {
			_, err := read(b)
			Expect(errors.Is(err, kind)).To(BeTrue(), "%v", err)
			Expect(err).To(MatchError(ContainSubstring(text)))
		},
		Entry("empty", []byte{}, npy.ErrFormat, "shorter than the 8-byte preamble"),
		Entry("bad magic", []byte("NUMPY!!!"), npy.ErrFormat, `it starts with "NUMPY!"`),
		Entry("unknown version", []byte("\x93NUMPY\x04\x00\x00\x00"), npy.ErrFormat, "unknown format version 4.0"),
		Entry("truncated header", append([]byte("\x93NUMPY\x01\x00\x76\x00"), "{'descr'"...), npy.ErrFormat, "truncated in the header"),
		Entry("header without keys", header("{'descr': '<f4', }"), npy.ErrFormat, "malformed header"),
		Entry("header without newline or braces", append([]byte("\x93NUMPY\x01\x00\x05\x00"), "descr"...), npy.ErrFormat, "malformed header"),
		Entry("big-endian", append(header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }"), 0x3f, 0x80, 0, 0), npy.ErrUnsupported, "big-endian data (>f4); convert it to little-endian"),
		Entry("Fortran order", append(header("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }"), 0, 0, 0x80, 0x3f), npy.ErrUnsupported, "Fortran-order (column-major) array of shape (1, 1); save it in C order: np.save(path, np.ascontiguousarray(a))"),
		Entry("int32", append(header("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }"), 1, 0, 0, 0), npy.ErrUnsupported, "dtype int32 ('<i4')"),
		Entry("object arrays", header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"), npy.ErrUnsupported, `dtype "|O"`),
		Entry("truncated data", append(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"), 0, 0, 0x80, 0x3f, 0), npy.ErrFormat, "truncated: shape (2,) of float32 needs 8 data bytes, the file has 5"),
		Entry("trailing bytes", append(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"), 0, 0, 0x80, 0x3f, 9, 9), npy.ErrFormat, "2 bytes after the data of shape (1,)"),
		Entry("negative dimension", header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), npy.ErrFormat, `bad dimension "-1"`),
		Entry("a huge shape over a short file", append(header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }"), 1, 2, 3), npy.ErrFormat, "the file has 3"),
		Entry("a shape beyond any tensor", header("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"), npy.ErrFormat, "too many elements"),
	)

	It("names the file in ReadFile's errors", func() {
		path := filepath.Join(GinkgoT().TempDir(), "x.npy")
		Expect(os.WriteFile(path, []byte("junk junk"), 0o644)).To(Succeed())
		_, err := npy.ReadFile(path)
		Expect(err).To(MatchError(HavePrefix(path + ": ")))
		Expect(npy.WriteFile(path, tensor.Scalar(3))).To(Succeed())
		t, err := npy.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.I64).To(Equal([]int64{3}))
	})

	It("names NumPy dtypes readably", func() {
		Expect(npy.DTypeName("<f8")).To(Equal("float64"))
		Expect(npy.DTypeName(">f4")).To(Equal("big-endian float32"))
		Expect(npy.DTypeName("|u1")).To(Equal("uint8"))
		Expect(npy.DTypeName("<U3")).To(Equal(`"<U3"`))
	})
})

// python returns /usr/bin/python3 when it imports numpy, else skips.
func python() string {
	GinkgoHelper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		Skip("no numpy under " + py + ": " + err.Error())
	}
	return py
}

var _ = Describe("against NumPy", func() {
	It("np.load reads what Write writes, and Read reads what np.save writes", func() {
		py := python()
		dir := GinkgoT().TempDir()
		x := tensor.FromFloat32([]float32{1.5, float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1)), 1e-45, 3}, 2, 3)
		Expect(npy.WriteFile(filepath.Join(dir, "ours.npy"), x)).To(Succeed())
		script := `
import numpy as np, sys
d = sys.argv[1]
a = np.load(d + "/ours.npy")
assert a.dtype == np.float32 and a.shape == (2, 3), (a.dtype, a.shape)
print(" ".join(hex(v) for v in a.view(np.uint32).ravel()))
np.save(d + "/f32.npy", np.arange(12, dtype=np.float32).reshape(3, 4) / 7)
np.save(d + "/f64.npy", np.array([[np.pi, -2.5]]))
np.save(d + "/i64.npy", np.int64(-42))
np.save(d + "/empty.npy", np.zeros((0, 5), dtype=np.float32))
np.save(d + "/fortran.npy", np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
np.save(d + "/big.npy", np.ones(3, dtype=">f4"))
np.save(d + "/i32.npy", np.ones(3, dtype=np.int32))
`
		out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(strings.Fields(string(out))).To(Equal([]string{"0x3fc00000", "0x7fc00000", "0x7f800000", "0x80000000", "0x1", "0x40400000"}))

		f32, err := npy.ReadFile(filepath.Join(dir, "f32.npy"))
		Expect(err).NotTo(HaveOccurred())
		Expect(f32.Shape).To(Equal([]int{3, 4}))
		for i, v := range f32.F32 {
			Expect(v).To(Equal(float32(i) / 7))
		}
		f64, err := npy.ReadFile(filepath.Join(dir, "f64.npy"))
		Expect(err).NotTo(HaveOccurred())
		expectBits(f64, tensor.FromFloat64([]float64{math.Pi, -2.5}, 1, 2))
		i64, err := npy.ReadFile(filepath.Join(dir, "i64.npy"))
		Expect(err).NotTo(HaveOccurred())
		expectBits(i64, tensor.Scalar(-42))
		empty, err := npy.ReadFile(filepath.Join(dir, "empty.npy"))
		Expect(err).NotTo(HaveOccurred())
		Expect(empty.Shape).To(Equal([]int{0, 5}))

		_, err = npy.ReadFile(filepath.Join(dir, "fortran.npy"))
		Expect(err).To(MatchError(ContainSubstring("Fortran-order")))
		_, err = npy.ReadFile(filepath.Join(dir, "big.npy"))
		Expect(err).To(MatchError(ContainSubstring("big-endian")))
		_, err = npy.ReadFile(filepath.Join(dir, "i32.npy"))
		Expect(err).To(MatchError(ContainSubstring("dtype int32")))
	})
})

var _ = Describe("hostile files", func() {
	It("reads a header dict as NumPy does: each key once, a shape that is a tuple", func() {
		for dict, text := range map[string]string{
			"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'descr': '|O', }": `the key "descr" is given twice`,
			"{'descr': '<f4', 'fortran_order': False, 'shape': (1), }":                 "(1) is an integer, not a tuple; a 1-d shape is written (1,)",
			"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }":        `unknown key "x"`,
		} {
			_, err := read(append(header(dict), 0, 0, 0x80, 0x3f))
			Expect(errors.Is(err, npy.ErrFormat)).To(BeTrue(), "%s: %v", dict, err)
			Expect(err).To(MatchError(ContainSubstring(text)), dict)
		}
		t, err := read(append(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1,), }"), 0, 0, 0x80, 0x3f))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Shape).To(Equal([]int{1, 1}))
	})

	It("refuses a FIFO, a symlink to one and a device at once instead of blocking", func() {
		dir := GinkgoT().TempDir()
		fifo := filepath.Join(dir, "x.npy")
		Expect(syscall.Mkfifo(fifo, 0o600)).To(Succeed())
		link := filepath.Join(dir, "link.npy")
		Expect(os.Symlink(fifo, link)).To(Succeed())
		for path, kind := range map[string]string{fifo: "a FIFO", link: "a FIFO", "/dev/null": "a character device"} {
			done := make(chan error, 2)
			go func() {
				_, err := npy.ReadFile(path)
				done <- err
				_, err = npy.StatFile(path)
				done <- err
			}()
			for range 2 {
				var err error
				Eventually(done, 5*time.Second).Should(Receive(&err), path)
				Expect(errors.Is(err, npy.ErrNotRegular)).To(BeTrue(), "%v", err)
				Expect(err).To(MatchError(path + ": npy: malformed file: not a regular file (it is " + kind + ")"))
			}
		}
	})

	It("sizes a file with fstat before reading it: a sparse file claiming 1 GiB costs no allocation", func() {
		path := filepath.Join(GinkgoT().TempDir(), "x.npy")
		h := header("{'descr': '<f4', 'fortran_order': False, 'shape': (268435456,), }")
		Expect(os.WriteFile(path, h, 0o644)).To(Succeed())
		Expect(os.Truncate(path, int64(len(h))+4096)).To(Succeed()) // sparse: 4 KiB of the 1 GiB
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := npy.ReadFile(path)
		runtime.ReadMemStats(&after)
		Expect(err).To(MatchError(ContainSubstring("truncated: shape (268435456,) of float32 needs 1073741824 data bytes, the file has 4096")))
		Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<", 1<<20))
		_, err = npy.StatFile(path)
		Expect(errors.Is(err, npy.ErrFormat)).To(BeTrue())

		Expect(os.Truncate(path, int64(len(h))+1<<30)).To(Succeed()) // sparse, the right size: StatFile reads no data
		runtime.ReadMemStats(&before)
		hd, err := npy.StatFile(path)
		runtime.ReadMemStats(&after)
		Expect(err).NotTo(HaveOccurred())
		Expect(hd.DataBytes()).To(Equal(int64(1 << 30)))
		Expect(hd.DataOffset).To(Equal(int64(len(h))))
		Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<", 1<<20))
	})

	It("reads a file into exactly its size, once", func() {
		path := filepath.Join(GinkgoT().TempDir(), "x.npy")
		Expect(npy.WriteFile(path, tensor.NewFloat32(1<<21, 4))).To(Succeed()) // 32 MiB
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t, err := npy.ReadFile(path)
		runtime.ReadMemStats(&after)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.F32).To(HaveLen(8 << 20))
		Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<", 33<<20)) // no append doubling
	})
})

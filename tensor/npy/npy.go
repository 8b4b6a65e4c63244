// Package npy reads and writes one tensor in NumPy's .npy format
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// C order, little-endian float32 ('<f4'), float64 ('<f8') and int64
// ('<i8'), rank 0 and up. It is what `rxeq run --dump` writes and what
// `rxeq run --inputs` reads.
//
// # Why not a library
//
// codeberg.org/sbinet/npyio (v0.14.0) was measured against this code and
// is not used, because it is both slower and less complete for what rxeq
// needs (BenchmarkWrite and BenchmarkRead in this package time both on a
// 65536×32 float32 array; the ratios are quoted in docs/reports.md):
//
//   - Writing takes a Go value whose shape it discovers by reflection: a
//     flat slice is always written with shape (n,), so a rank-2 tensor has
//     to be handed over as nested slices, and a shape with a zero leading
//     dimension such as (0, 4) cannot be written at all (an empty slice is
//     written with the wrong shape). It always writes format version 2.0,
//     and its header padding does not make the data start at a multiple
//     of 64 bytes, as the format asks so that the data can be
//     memory-mapped. Writing nested slices goes through reflection
//     element by element.
//   - Reading into a []float32 issues one io.ReadFull per element, and it
//     ignores the 'fortran_order' flag (a Fortran-order array comes back
//     transposed without a word). A header without a trailing newline or
//     with its keys in another order makes it panic (a slice index out of
//     range), which no caller can turn into a message about the file.
//
// This package parses the header dictionary by key, refuses Fortran order,
// big-endian data and other dtypes with an error that says how to convert
// the array in NumPy, checks the data length against the shape (a
// truncated file and trailing bytes are both errors), never allocates more
// than the data that is actually there, and writes version 1.0 headers
// (2.0 only when the header does not fit 1.0) padded so that the data
// starts at a multiple of 64 bytes, as NumPy does.
package npy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// Error kinds. Every error of Read wraps one of them.
var (
	// ErrFormat: the stream is not a well-formed .npy file (bad magic, an
	// unknown version, a malformed header, data shorter or longer than
	// the shape says).
	ErrFormat = errors.New("npy: malformed file")
	// ErrUnsupported: a well-formed .npy file that rxeq cannot use as it
	// is: Fortran order, big-endian data or a dtype other than float32,
	// float64 and int64. The message says how to convert it in NumPy.
	ErrUnsupported = errors.New("npy: unsupported array")
)

// Magic is the first six bytes of every .npy file.
const Magic = "\x93NUMPY"

// Descr returns the NumPy dtype string of a tensor dtype: "<f4", "<f8" or
// "<i8".
func Descr(d tensor.DType) (string, error) {
	switch d {
	case tensor.Float32:
		return "<f4", nil
	case tensor.Float64:
		return "<f8", nil
	case tensor.Int64:
		return "<i8", nil
	}
	return "", fmt.Errorf("%w: dtype %s has no .npy type", ErrUnsupported, d)
}

// ShapeTuple prints a shape as a Python tuple, as NumPy prints shapes:
// (), (3,), (2, 3).
func ShapeTuple(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Write writes t in .npy format: the magic "\x93NUMPY", the version bytes
// 1 0, the header length as a little-endian uint16, then the header — a
// Python dict literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded
// with spaces and ended by '\n' so that the data starts at a multiple of
// 64 bytes — and the elements in row-major (C) order, little-endian. A
// header too long for version 1.0 is written as version 2.0 (a uint32
// length). np.load reads the file as the same array.
func Write(w io.Writer, t *tensor.Tensor) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	descr, err := Descr(t.DType)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, ShapeTuple(t.Shape))
	pre := []byte(Magic + "\x01\x00\x00\x00")
	if len(pre)+len(header)+1 > math.MaxUint16 {
		pre = []byte(Magic + "\x02\x00\x00\x00\x00\x00")
	}
	header += strings.Repeat(" ", (64-(len(pre)+len(header)+1)%64)%64) + "\n"
	if pre[6] == 1 {
		binary.LittleEndian.PutUint16(pre[8:], uint16(len(header)))
	} else {
		binary.LittleEndian.PutUint32(pre[8:], uint32(len(header)))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(pre)
	bw.WriteString(header)
	var buf [8 << 10]byte
	switch t.DType {
	case tensor.Float32:
		for data := t.F32; len(data) > 0; {
			n := min(len(data), len(buf)/4)
			for i, v := range data[:n] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			bw.Write(buf[:4*n])
			data = data[n:]
		}
	case tensor.Float64:
		for data := t.F64; len(data) > 0; {
			n := min(len(data), len(buf)/8)
			for i, v := range data[:n] {
				binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
			}
			bw.Write(buf[:8*n])
			data = data[n:]
		}
	case tensor.Int64:
		for data := t.I64; len(data) > 0; {
			n := min(len(data), len(buf)/8)
			for i, v := range data[:n] {
				binary.LittleEndian.PutUint64(buf[8*i:], uint64(v))
			}
			bw.Write(buf[:8*n])
			data = data[n:]
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("npy: writing: %w", err)
	}
	return nil
}

// WriteFile writes t to the file path (see Write), creating or truncating
// it.
func WriteFile(path string, t *tensor.Tensor) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, t); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// Header is the parsed header of a .npy file.
type Header struct {
	Major, Minor int    // format version: 1.0, 2.0 or 3.0
	Descr        string // the NumPy dtype string, like "<f4"
	Fortran      bool   // 'fortran_order'
	Shape        []int  // nil for a scalar
}

var (
	descrRE   = regexp.MustCompile(`['"]descr['"]\s*:\s*['"]([^'"]*)['"]`)
	fortranRE = regexp.MustCompile(`['"]fortran_order['"]\s*:\s*(True|False)\b`)
	shapeRE   = regexp.MustCompile(`['"]shape['"]\s*:\s*\(([^)]*)\)`)
)

// ReadHeader reads the magic, the version and the header dictionary of a
// .npy stream, leaving r at the first data byte.
func ReadHeader(r io.Reader) (Header, error) {
	var h Header
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return h, fmt.Errorf("%w: not a .npy file: shorter than the 8-byte preamble", ErrFormat)
	}
	if string(pre[:6]) != Magic {
		return h, fmt.Errorf("%w: not a .npy file (it starts with %q, not \"\\x93NUMPY\")", ErrFormat, pre[:6])
	}
	h.Major, h.Minor = int(pre[6]), int(pre[7])
	var hlen int
	switch h.Major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, fmt.Errorf("%w: truncated in the header length", ErrFormat)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, fmt.Errorf("%w: truncated in the header length", ErrFormat)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return h, fmt.Errorf("%w: unknown format version %d.%d (rxeq reads 1.0, 2.0 and 3.0)", ErrFormat, h.Major, h.Minor)
	}
	if hlen > 1<<20 {
		return h, fmt.Errorf("%w: header of %d bytes is implausibly long", ErrFormat, hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return h, fmt.Errorf("%w: truncated in the header (%d bytes announced)", ErrFormat, hlen)
	}
	header := strings.TrimSpace(string(hb))
	dm, fm, sm := descrRE.FindStringSubmatch(header), fortranRE.FindStringSubmatch(header), shapeRE.FindStringSubmatch(header)
	if !strings.HasPrefix(header, "{") || !strings.HasSuffix(header, "}") || dm == nil || fm == nil || sm == nil {
		return h, fmt.Errorf("%w: malformed header %q (want a dict with 'descr', 'fortran_order' and 'shape')", ErrFormat, header)
	}
	h.Descr, h.Fortran = dm[1], fm[1] == "True"
	for _, f := range strings.Split(sm[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := strconv.Atoi(strings.TrimSuffix(f, "L"))
		if err != nil || d < 0 {
			return h, fmt.Errorf("%w: bad dimension %q in shape (%s)", ErrFormat, f, sm[1])
		}
		h.Shape = append(h.Shape, d)
	}
	return h, nil
}

// dtypeNames are readable names of NumPy dtype codes, for messages.
var dtypeNames = map[string]string{
	"f2": "float16", "f4": "float32", "f8": "float64", "f16": "float128",
	"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
	"u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
	"b1": "bool", "c8": "complex64", "c16": "complex128",
}

// DTypeName returns a readable name of a NumPy dtype string: "<f8" is
// "float64", ">f4" is "big-endian float32"; unknown strings come back
// quoted.
func DTypeName(descr string) string {
	order, code := "", descr
	if len(descr) > 0 && strings.ContainsRune("<>|=", rune(descr[0])) {
		order, code = descr[:1], descr[1:]
	}
	name, ok := dtypeNames[code]
	if !ok {
		return strconv.Quote(descr)
	}
	if order == ">" && code != "i1" && code != "u1" && code != "b1" {
		return "big-endian " + name
	}
	return name
}

// Read reads a .npy stream (format 1.0, 2.0 or 3.0) holding a C-order
// '<f4', '<f8' or '<i8' array: what Write writes, and what np.save writes
// for float32, float64 and int64 arrays on a little-endian machine. The
// stream must end with the data. Fortran order, big-endian data and other
// dtypes are ErrUnsupported errors saying how to convert the array;
// anything malformed or truncated is an ErrFormat error.
func Read(r io.Reader) (*tensor.Tensor, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	h, err := ReadHeader(br)
	if err != nil {
		return nil, err
	}
	return readData(br, h)
}

// ReadFile reads the .npy file path (see Read); errors start with the
// path.
func ReadFile(path string) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func readData(br *bufio.Reader, h Header) (*tensor.Tensor, error) {
	var size int
	var dt tensor.DType
	switch h.Descr {
	case "<f4":
		dt, size = tensor.Float32, 4
	case "<f8":
		dt, size = tensor.Float64, 8
	case "<i8":
		dt, size = tensor.Int64, 8
	case ">f4", ">f8", ">i8":
		return nil, fmt.Errorf("%w: big-endian data (%s); convert it to little-endian: np.save(path, a.astype(a.dtype.newbyteorder('<')))", ErrUnsupported, h.Descr)
	default:
		return nil, fmt.Errorf("%w: dtype %s ('%s'); rxeq reads float32 ('<f4'), float64 ('<f8') and int64 ('<i8')", ErrUnsupported, DTypeName(h.Descr), h.Descr)
	}
	if h.Fortran {
		return nil, fmt.Errorf("%w: Fortran-order (column-major) array of shape %s; save it in C order: np.save(path, np.ascontiguousarray(a))", ErrUnsupported, ShapeTuple(h.Shape))
	}
	n, ok := tensor.CheckedNumElements(h.Shape)
	if !ok || n > math.MaxInt/size {
		return nil, fmt.Errorf("%w: shape %s has too many elements", ErrFormat, ShapeTuple(h.Shape))
	}
	shape := slices.Clone(h.Shape)
	t := &tensor.Tensor{DType: dt, Shape: shape}
	var got int
	var err error
	switch dt {
	case tensor.Float32:
		t.F32, got, err = readElems(br, n, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case tensor.Float64:
		t.F64, got, err = readElems(br, n, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case tensor.Int64:
		t.I64, got, err = readElems(br, n, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	}
	if err != nil {
		return nil, fmt.Errorf("npy: reading data: %w", err)
	}
	if got < n*size {
		return nil, fmt.Errorf("%w: truncated: shape %s of %s needs %d data bytes, the file has %d", ErrFormat, ShapeTuple(h.Shape), DTypeName(h.Descr), n*size, got)
	}
	if extra, _ := br.Peek(1); len(extra) > 0 {
		rest, _ := io.Copy(io.Discard, br)
		return nil, fmt.Errorf("%w: %d bytes after the data of shape %s (several arrays in one file? save one array per file)", ErrFormat, rest, ShapeTuple(h.Shape))
	}
	return t, nil
}

// readElems decodes n elements of size bytes each from br, returning them
// and how many data bytes were there (fewer than n*size when the stream
// ends early). The slice grows with the data actually read, so a header
// announcing a huge shape over a short stream costs no huge allocation.
func readElems[T any](br *bufio.Reader, n, size int, decode func([]byte) T) ([]T, int, error) {
	out := make([]T, 0, min(n, (16<<20)/size))
	var buf [64 << 10]byte
	got := 0
	for len(out) < n {
		want := min((n-len(out))*size, len(buf))
		k, err := io.ReadFull(br, buf[:want])
		got += k
		for i := 0; i+size <= k; i += size {
			out = append(out, decode(buf[i:i+size]))
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out, got, nil
		}
		if err != nil {
			return nil, got, err
		}
	}
	return out, got, nil
}

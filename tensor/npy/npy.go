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
	"slices"
	"strconv"
	"strings"
	"syscall"

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
	// DataOffset is where the data starts: the length of the preamble and
	// the header.
	DataOffset int64
}

// ReadHeader reads the magic, the version and the header dictionary of a
// .npy stream, leaving r at the first data byte.
//
// The dictionary is read as NumPy's np.lib.format reads it (a Python
// literal): exactly the keys 'descr' (a string), 'fortran_order' (True or
// False) and 'shape' (a tuple of non-negative integers), each once. A key
// given twice, another key, or a shape that is not a tuple (`(128)` is
// the integer 128 in Python, not the tuple `(128,)`) is an ErrFormat
// error, as np.load refuses them too.
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
		h.DataOffset = 10 + int64(hlen)
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, fmt.Errorf("%w: truncated in the header length", ErrFormat)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		h.DataOffset = 12 + int64(hlen)
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
	if err := parseDict(header, &h); err != nil {
		return h, fmt.Errorf("%w: malformed header %s: %s (want a dict with 'descr', 'fortran_order' and 'shape', each once)", ErrFormat, quoteShort(header), err)
	}
	return h, nil
}

// quoteShort quotes s, cut to 200 bytes.
func quoteShort(s string) string {
	if len(s) > 200 {
		return strconv.Quote(s[:200]) + "…"
	}
	return strconv.Quote(s)
}

// parseDict reads the header dictionary into h (see ReadHeader).
func parseDict(s string, h *Header) error {
	p := &dictParser{s: s}
	if !p.eat("{") {
		return errors.New("it does not start with '{'")
	}
	seen := map[string]bool{}
	for {
		if p.eat("}") {
			break
		}
		key, err := p.str()
		if err != nil {
			return fmt.Errorf("a key: %w", err)
		}
		if seen[key] {
			return fmt.Errorf("the key %q is given twice", key)
		}
		seen[key] = true
		if !p.eat(":") {
			return fmt.Errorf("no ':' after the key %q", key)
		}
		switch key {
		case "descr":
			if h.Descr, err = p.str(); err != nil {
				return fmt.Errorf("'descr': %w", err)
			}
		case "fortran_order":
			switch {
			case p.eat("True"):
				h.Fortran = true
			case p.eat("False"):
				h.Fortran = false
			default:
				return errors.New("'fortran_order' is not True or False")
			}
		case "shape":
			if h.Shape, err = p.tuple(); err != nil {
				return fmt.Errorf("'shape': %w", err)
			}
		default:
			return fmt.Errorf("unknown key %q", key)
		}
		if p.eat("}") {
			break
		}
		if !p.eat(",") {
			return errors.New("no ',' or '}' after a value")
		}
	}
	if p.skip(); p.i != len(p.s) {
		return errors.New("text after the closing '}'")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return fmt.Errorf("no key %q", k)
		}
	}
	return nil
}

// dictParser reads the Python literal of a .npy header.
type dictParser struct {
	s string
	i int
}

func (p *dictParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// eat consumes tok (after blanks) when it comes next.
func (p *dictParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *dictParser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("not a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("an unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\'\"") {
		return "", errors.New("a string with escapes")
	}
	p.i += end + 2
	return v, nil
}

// tuple reads a tuple of non-negative integers: (), (n,), (n, m) or
// (n, m,); a parenthesised integer is not a tuple.
func (p *dictParser) tuple() ([]int, error) {
	if !p.eat("(") {
		return nil, errors.New("not a tuple")
	}
	var out []int
	comma := false // the last item is followed by a comma
	for !p.eat(")") {
		if len(out) > 0 {
			if !p.eat(",") {
				return nil, errors.New("no ',' between dimensions")
			}
			if comma = true; p.eat(")") {
				break
			}
		}
		p.skip()
		j := p.i
		for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '-') {
			j++
		}
		f := p.s[p.i:j]
		if j < len(p.s) && p.s[j] == 'L' {
			j++
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("bad dimension %q", p.s[p.i:j])
		}
		p.i, comma = j, false
		if out = append(out, d); len(out) > 64 {
			return nil, errors.New("more than 64 dimensions")
		}
	}
	if len(out) == 1 && !comma {
		return nil, fmt.Errorf("(%d) is an integer, not a tuple; a 1-d shape is written (%d,)", out[0], out[0])
	}
	return out, nil
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
	return readData(br, h, false)
}

// ErrNotRegular: a path that is not a regular file (a FIFO, a socket, a
// device such as /dev/stdin, a directory), refused before any read, so
// that a FIFO without a writer cannot block the reader. It wraps
// ErrFormat.
var ErrNotRegular = fmt.Errorf("%w: not a regular file", ErrFormat)

// OpenFile opens path for reading as rxeq reads files it is given: with
// O_NONBLOCK, so that opening a FIFO without a writer does not block, and
// then requires a regular file on the descriptor (fstat, so a symlink to a
// FIFO or /proc/self/fd/0 is caught too); anything else is an
// ErrNotRegular error naming what it is. It returns the file and its size.
func OpenFile(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w (it is %s)", path, ErrNotRegular, fileKind(st.Mode()))
	}
	return f, st.Size(), nil
}

// fileKind names the kind of a file that is not a regular one.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "of mode " + m.String()
}

// StatFile reads and checks the header of the .npy file path without
// reading its data: the dtype, the order, and the file's size (fstat),
// which must be the header's plus exactly the bytes the shape needs (a
// truncated file and trailing bytes are ErrFormat errors). So a header
// announcing gigabytes over a short or sparse file is found out before
// anything is allocated. Errors start with the path.
func StatFile(path string) (Header, error) {
	f, size, err := OpenFile(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	h, err := statHeader(f, size)
	if err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// statHeader reads the header of a file of size bytes and checks it (see
// StatFile).
func statHeader(f io.Reader, size int64) (Header, error) {
	h, err := ReadHeader(f)
	if err != nil {
		return h, err
	}
	_, elem, err := h.elemType()
	if err != nil {
		return h, err
	}
	n, ok := tensor.CheckedNumElements(h.Shape)
	if !ok || n > math.MaxInt64/elem {
		return h, fmt.Errorf("%w: shape %s has too many elements", ErrFormat, ShapeTuple(h.Shape))
	}
	need, have := int64(n)*int64(elem), size-h.DataOffset
	switch {
	case have < need:
		return h, fmt.Errorf("%w: truncated: shape %s of %s needs %d data bytes, the file has %d", ErrFormat, ShapeTuple(h.Shape), DTypeName(h.Descr), need, have)
	case have > need:
		return h, fmt.Errorf("%w: %d bytes after the data of shape %s (several arrays in one file? save one array per file)", ErrFormat, have-need, ShapeTuple(h.Shape))
	}
	return h, nil
}

// DataBytes returns how many data bytes the header's shape and dtype
// need (0 for a dtype rxeq does not read).
func (h Header) DataBytes() int64 {
	_, elem, err := h.elemType()
	n, ok := tensor.CheckedNumElements(h.Shape)
	if err != nil || !ok || n > math.MaxInt64/elem {
		return 0
	}
	return int64(n) * int64(elem)
}

// ReadFile reads the .npy file path (see Read), opened with OpenFile and
// checked with StatFile's rules before the data is read: the data is read
// once, into a tensor of exactly the size the (checked) header gives.
// Errors start with the path.
func ReadFile(path string) (*tensor.Tensor, error) {
	f, size, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	h, err := statHeader(br, size)
	if err == nil {
		var t *tensor.Tensor
		if t, err = readData(br, h, true); err == nil {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

// elemType returns the tensor dtype and element size of the header's
// descr, or an ErrUnsupported error saying how to convert the array.
func (h Header) elemType() (tensor.DType, int, error) {
	var dt tensor.DType
	var size int
	switch h.Descr {
	case "<f4":
		dt, size = tensor.Float32, 4
	case "<f8":
		dt, size = tensor.Float64, 8
	case "<i8":
		dt, size = tensor.Int64, 8
	case ">f4", ">f8", ">i8":
		return 0, 0, fmt.Errorf("%w: big-endian data (%s); convert it to little-endian: np.save(path, a.astype(a.dtype.newbyteorder('<')))", ErrUnsupported, h.Descr)
	default:
		return 0, 0, fmt.Errorf("%w: dtype %s ('%s'); rxeq reads float32 ('<f4'), float64 ('<f8') and int64 ('<i8')", ErrUnsupported, DTypeName(h.Descr), h.Descr)
	}
	if h.Fortran {
		return 0, 0, fmt.Errorf("%w: Fortran-order (column-major) array of shape %s; save it in C order: np.save(path, np.ascontiguousarray(a))", ErrUnsupported, ShapeTuple(h.Shape))
	}
	return dt, size, nil
}

// readData reads the data of h from br; exact says the stream is known to
// hold exactly that data (StatFile's check), so the elements are
// allocated at once.
func readData(br *bufio.Reader, h Header, exact bool) (*tensor.Tensor, error) {
	dt, size, err := h.elemType()
	if err != nil {
		return nil, err
	}
	n, ok := tensor.CheckedNumElements(h.Shape)
	if !ok || n > math.MaxInt/size {
		return nil, fmt.Errorf("%w: shape %s has too many elements", ErrFormat, ShapeTuple(h.Shape))
	}
	shape := slices.Clone(h.Shape)
	t := &tensor.Tensor{DType: dt, Shape: shape}
	var got int
	switch dt {
	case tensor.Float32:
		t.F32, got, err = readElems(br, n, 4, exact, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case tensor.Float64:
		t.F64, got, err = readElems(br, n, 8, exact, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case tensor.Int64:
		t.I64, got, err = readElems(br, n, 8, exact, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
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
// ends early). Unless exact, the slice grows with the data actually read,
// so a header announcing a huge shape over a short stream costs no huge
// allocation; exact allocates all n at once.
func readElems[T any](br *bufio.Reader, n, size int, exact bool, decode func([]byte) T) ([]T, int, error) {
	c := min(n, (16<<20)/size)
	if exact {
		c = n
	}
	out := make([]T, 0, c)
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

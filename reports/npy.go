package reports

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// ErrNPY is the kind of every error about a malformed or unsupported .npy
// stream.
var ErrNPY = errors.New("npy")

const npyMagic = "\x93NUMPY"

// npyDescr returns the NumPy dtype string of a tensor dtype.
func npyDescr(d tensor.DType) (string, error) {
	switch d {
	case tensor.Float32:
		return "<f4", nil
	case tensor.Float64:
		return "<f8", nil
	case tensor.Int64:
		return "<i8", nil
	}
	return "", fmt.Errorf("%w: dtype %s has no .npy type", ErrNPY, d)
}

// npyShape prints a shape as a Python tuple: (), (3,), (2, 3).
func npyShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// WriteNPY writes t in NumPy's .npy format, version 1.0: the magic
// "\x93NUMPY", the version bytes 1 0, the header length as a little-endian
// uint16, then the header — a Python dict literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded
// with spaces and ended by '\n' so that the data starts at a multiple of
// 64 bytes — and the elements in row-major (C) order, little-endian.
// Float32, Float64 and Int64 tensors are written as '<f4', '<f8' and
// '<i8'. np.load reads the file as the same array.
func WriteNPY(w io.Writer, t *tensor.Tensor) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrNPY, err)
	}
	descr, err := npyDescr(t.DType)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, npyShape(t.Shape))
	total := len(npyMagic) + 2 + 2 + len(header) + 1
	header += strings.Repeat(" ", (64-total%64)%64) + "\n"
	if len(header) > math.MaxUint16 {
		return fmt.Errorf("%w: header of %d bytes does not fit format 1.0", ErrNPY, len(header))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0})
	binary.Write(bw, binary.LittleEndian, uint16(len(header)))
	bw.WriteString(header)
	var buf [8]byte
	switch t.DType {
	case tensor.Float32:
		for _, v := range t.F32 {
			binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(v))
			bw.Write(buf[:4])
		}
	case tensor.Float64:
		for _, v := range t.F64 {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
			bw.Write(buf[:])
		}
	case tensor.Int64:
		for _, v := range t.I64 {
			binary.LittleEndian.PutUint64(buf[:], uint64(v))
			bw.Write(buf[:])
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%w: writing: %w", ErrNPY, err)
	}
	return nil
}

var (
	npyDescrRE   = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyFortranRE = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShapeRE   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// ReadNPY reads a .npy stream of version 1.0 or 2.0 holding a C-order
// '<f4', '<f8' or '<i8' array (what WriteNPY writes and what NumPy writes
// for those dtypes on a little-endian machine). Anything else — Fortran
// order, big-endian or other dtypes, truncated data — is an error wrapping
// ErrNPY.
func ReadNPY(r io.Reader) (*tensor.Tensor, error) {
	br := bufio.NewReader(r)
	var pre [8]byte
	if _, err := io.ReadFull(br, pre[:]); err != nil {
		return nil, fmt.Errorf("%w: reading magic: %w", ErrNPY, err)
	}
	if string(pre[:6]) != npyMagic {
		return nil, fmt.Errorf("%w: not a .npy stream (bad magic %q)", ErrNPY, pre[:6])
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("%w: reading header length: %w", ErrNPY, err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("%w: reading header length: %w", ErrNPY, err)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, fmt.Errorf("%w: unsupported format version %d.%d", ErrNPY, pre[6], pre[7])
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(br, hb); err != nil {
		return nil, fmt.Errorf("%w: reading header: %w", ErrNPY, err)
	}
	header := string(hb)
	dm, fm, sm := npyDescrRE.FindStringSubmatch(header), npyFortranRE.FindStringSubmatch(header), npyShapeRE.FindStringSubmatch(header)
	if dm == nil || fm == nil || sm == nil {
		return nil, fmt.Errorf("%w: malformed header %q", ErrNPY, strings.TrimSpace(header))
	}
	if fm[1] != "False" {
		return nil, fmt.Errorf("%w: Fortran-order arrays are not supported", ErrNPY)
	}
	var shape []int
	for _, f := range strings.Split(sm[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%w: bad dimension %q in shape (%s)", ErrNPY, f, sm[1])
		}
		shape = append(shape, d)
	}
	n := tensor.NumElements(shape)
	var t *tensor.Tensor
	var size int
	switch dm[1] {
	case "<f4":
		t, size = tensor.NewFloat32(shape...), 4
	case "<f8":
		t, size = tensor.NewFloat64(shape...), 8
	case "<i8":
		t, size = tensor.NewInt64(shape...), 8
	default:
		return nil, fmt.Errorf("%w: unsupported dtype %q (want '<f4', '<f8' or '<i8')", ErrNPY, dm[1])
	}
	data := make([]byte, n*size)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("%w: reading %d elements of shape %v: %w", ErrNPY, n, shape, err)
	}
	for i := 0; i < n; i++ {
		switch dm[1] {
		case "<f4":
			t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		case "<f8":
			t.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		case "<i8":
			t.I64[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
	}
	return t, nil
}

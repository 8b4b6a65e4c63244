package external

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/tensor"
)

// Protocol is the version string of the external executor protocol
// that an executor sends in its hello (docs/executor-protocol.md).
const Protocol = "rxeq.executor/v1"

// Limits of one frame read from an executor. A length prefix beyond
// maxHeaderBytes is not a frame (text on stdout reads as a length of a
// gigabyte or more); payloads are bounded by Options.MaxPayload.
const (
	maxHeaderBytes    = 16 << 20
	defaultMaxPayload = 4 << 30
)

// Message types of rxeq.executor/v1.
const (
	msgHello   = "hello"
	msgPrepare = "prepare"
	msgReady   = "ready"
	msgRun     = "run"
	msgResult  = "result"
	msgError   = "error"
	msgRelease = "release"
	msgClose   = "close"
)

// wireTensor describes one tensor of a frame; its nbytes bytes follow the
// header, in the order of the list, with no padding.
type wireTensor struct {
	Name   string `json:"name"`
	DType  string `json:"dtype"`
	Shape  []int  `json:"shape"`
	NBytes int64  `json:"nbytes"`
}

// wireParam is a parameter or result of a checked signature: shape
// entries are sizes (numbers) or symbolic dimensions (strings).
type wireParam struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []any  `json:"shape"`
}

// wireSite is a checked-arithmetic site, from which an executor builds the
// shared error text.
type wireSite struct {
	Builtin string `json:"builtin"`
	LHS     string `json:"lhs"`
	Pos     string `json:"pos"`
}

// wireFunc is one function of a prepare message.
type wireFunc struct {
	Name    string      `json:"name"`
	Params  []wireParam `json:"params"`
	Results []wireParam `json:"results"`
	Checked []wireSite  `json:"checked"`
}

// prepareMsg is the harness's prepare message.
type prepareMsg struct {
	Type      string     `json:"type"`
	ID        uint64     `json:"id"`
	Program   int        `json:"program"`
	File      string     `json:"file"`
	Scenario  string     `json:"scenario"`
	Source    string     `json:"source"`
	Functions []wireFunc `json:"functions"`
	// Module is the code rxeq generated for the program, sent only to an
	// executor whose Options.Generate makes it (rxeq's generated-code
	// executors); an optional v1 field, absent otherwise.
	Module *Module `json:"module,omitempty"`
}

// Module is code rxeq generated from a program for an executor to run,
// sent in the prepare message's optional "module" field: the format
// ("torch", "numpy"), the module's source text, and the name of the
// function that implements each .rx function.
type Module struct {
	Format    string            `json:"format"`
	Source    string            `json:"source"`
	Functions map[string]string `json:"functions"`
}

// runMsg is the harness's run message; the inputs' bytes follow.
type runMsg struct {
	Type     string       `json:"type"`
	ID       uint64       `json:"id"`
	Program  int          `json:"program"`
	Function string       `json:"function"`
	Tensors  []wireTensor `json:"tensors"`
}

// releaseMsg and closeMsg have no answer.
type releaseMsg struct {
	Type    string `json:"type"`
	Program int    `json:"program"`
}

type closeMsg struct {
	Type string `json:"type"`
}

// inMsg is any message from an executor.
type inMsg struct {
	Type string  `json:"type"`
	ID   *uint64 `json:"id"`

	// hello
	Protocol string `json:"protocol"`
	Name     string `json:"name"`
	// FunctionsRaw is the hello's list of functions (absent or null:
	// every function, decided per program), decoded into Functions.
	FunctionsRaw json.RawMessage `json:"functions"`
	Functions    []string        `json:"-"`
	// Versions (optional, informative) names the software behind the
	// executor: {"python": "3.11.2", "torch": "1.13.0"}.
	Versions map[string]string `json:"versions"`

	// ready
	Unserved map[string]string `json:"unserved"`

	// result
	Tensors    []wireTensor      `json:"tensors"`
	InputCRC32 map[string]uint32 `json:"input_crc32"`

	// error
	Kind    string `json:"kind"`
	Message string `json:"message"`

	// raw is the header as it came.
	raw []byte
	// decoded holds the result's tensors (nil entries for dtypes rxeq
	// does not know, whose bytes were skipped), parallel to Tensors.
	decoded []*tensor.Tensor
	// unread says the tensors' bytes were left unread (all decoded
	// entries nil) because the header listed tensors other than the
	// expected ones: the stream is out of step and the process must go.
	unread bool
}

// wantTensor is the dtype and shape of an output that a result must have.
type wantTensor struct {
	dtype string
	shape []int
}

// maxWireRank bounds the rank of a tensor in a frame: rxeq's tensors
// have rank 4 at most, so a longer shape is garbage, refused before it is
// quoted or sized.
const maxWireRank = 64

// shapeText prints a shape for messages, cut after a few dimensions.
func shapeText(shape []int) string {
	if len(shape) <= 8 {
		return fmt.Sprint(shape)
	}
	return fmt.Sprintf("%v… (%d dimensions)", shape[:8], len(shape))
}

// protocolError is a message that breaks the protocol: its text says how.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// Unwrap returns executor.ErrProtocol: the supervisor (subproc) takes such
// a read error for a protocol violation at once.
func (e *protocolError) Unwrap() error { return executor.ErrProtocol }

func violation(format string, args ...any) error {
	return &protocolError{msg: fmt.Sprintf(format, args...)}
}

// dtypeNames maps the protocol's dtype names to rxeq's.
var dtypeNames = map[string]tensor.DType{"float32": tensor.Float32, "float64": tensor.Float64, "int64": tensor.Int64}

func itemSize(d tensor.DType) int {
	switch d {
	case tensor.Float32:
		return 4
	case tensor.Float64, tensor.Int64:
		return 8
	}
	return 0
}

// littleEndianHost reports whether this machine stores numbers
// little-endian, as the protocol does, so tensor data can cross the pipe
// without conversion.
func littleEndianHost() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}

// dataBytes returns the memory of t's elements as bytes, aliasing it (nil
// for an unknown dtype). Only for little-endian hosts.
func dataBytes(t *tensor.Tensor) []byte {
	switch t.DType {
	case tensor.Float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.F32))), 4*len(t.F32))
	case tensor.Float64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.F64))), 8*len(t.F64))
	case tensor.Int64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.I64))), 8*len(t.I64))
	}
	return nil
}

// leBytes returns t's elements as little-endian bytes: t's own memory on a
// little-endian host, a converted copy elsewhere. The result must not be
// modified.
func leBytes(t *tensor.Tensor) []byte {
	if littleEndianHost() {
		return dataBytes(t)
	}
	var out []byte
	switch t.DType {
	case tensor.Float32:
		for _, v := range t.F32 {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	case tensor.Float64:
		for _, v := range t.F64 {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		}
	case tensor.Int64:
		for _, v := range t.I64 {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	}
	return out
}

// readTensorData reads t's elements, little-endian, from r.
func readTensorData(r io.Reader, t *tensor.Tensor) error {
	if littleEndianHost() {
		_, err := io.ReadFull(r, dataBytes(t))
		return err
	}
	buf := make([]byte, itemSize(t.DType)*t.Len())
	if _, err := io.ReadFull(r, buf); err != nil {
		return err
	}
	switch t.DType {
	case tensor.Float32:
		for i := range t.F32 {
			t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
	case tensor.Float64:
		for i := range t.F64 {
			t.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
		}
	case tensor.Int64:
		for i := range t.I64 {
			t.I64[i] = int64(binary.LittleEndian.Uint64(buf[8*i:]))
		}
	}
	return nil
}

// writeFrame writes one frame: the header's length (uint32,
// little-endian), the header as JSON, then each payload in order.
func writeFrame(w *bufio.Writer, header any, payloads ...[]byte) error {
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(h)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, p := range payloads {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return w.Flush()
}

// readFrame reads one message: its header and, for tensors it lists, their
// payloads (at most maxPayload bytes in all). A malformed frame is a
// *protocolError; an I/O error (EOF included) is returned as it is.
//
// want, when not nil, is what a result must hold: each output's dtype and
// shape, by name, known from the run request before anything is read. A
// result whose header lists anything else (another name, dtype or shape)
// is returned with its payloads unread (inMsg.unread), so a header
// claiming gigabytes costs nothing; the caller reports the wrong outputs
// from the header and drops the process.
func readFrame(r *bufio.Reader, maxPayload int64, want map[string]wantTensor) (*inMsg, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size == 0 || size > maxHeaderBytes {
		// Peek at what follows, to show the bytes as they came.
		more, _ := r.Peek(min(r.Buffered(), 60))
		return nil, violation("garbage on stdout: %s is not a frame (a header length of %d bytes; the limit is %d). Is something printing to stdout?",
			quoteBytes(append(n[:], more...)), size, maxHeaderBytes)
	}
	h := make([]byte, size)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, err
	}
	m := inMsg{raw: h}
	if err := json.Unmarshal(h, &m); err != nil {
		// Said as a decoder sees it: one value that is not JSON, or
		// more than one.
		m = inMsg{raw: h}
		dec := json.NewDecoder(bytes.NewReader(h))
		if err := dec.Decode(&m); err != nil {
			return nil, violation("garbage on stdout: the header after length %d is not a JSON message (%v): %s", size, err, quoteBytes(h))
		}
		if dec.More() {
			return nil, violation("garbage on stdout: the %d-byte header holds more than one JSON value: %s", size, quoteBytes(h))
		}
		return nil, violation("garbage on stdout: the header after length %d is not a JSON message (%v): %s", size, err, quoteBytes(h))
	}
	if m.Type == "" {
		return nil, violation("a message without a \"type\": %s", quoteBytes(h))
	}
	var total int64
	for i, t := range m.Tensors {
		if t.NBytes < 0 {
			return nil, violation("tensor %d (%q) has nbytes %d", i, t.Name, t.NBytes)
		}
		total += t.NBytes
		if total > maxPayload {
			return nil, violation("the tensors of one message add up to more than %d bytes", maxPayload)
		}
		if len(t.Shape) > maxWireRank {
			return nil, violation("tensor %q has a shape of %d dimensions (the limit is %d)", t.Name, len(t.Shape), maxWireRank)
		}
		dt, known := dtypeNames[t.DType]
		if !known {
			continue
		}
		elems := int64(1)
		for _, d := range t.Shape {
			if d < 0 {
				return nil, violation("tensor %q has a negative dimension in shape %s", t.Name, shapeText(t.Shape))
			}
			if d > 0 && elems > math.MaxInt64/int64(d) {
				return nil, violation("tensor %q has shape %s, too large", t.Name, shapeText(t.Shape))
			}
			elems *= int64(d)
		}
		if want := elems * int64(itemSize(dt)); elems > maxPayload || want != t.NBytes {
			return nil, violation("tensor %q: %s shape %s takes %d bytes, the header says nbytes %d", t.Name, t.DType, shapeText(t.Shape), elems*int64(itemSize(dt)), t.NBytes)
		}
	}
	m.decoded = make([]*tensor.Tensor, len(m.Tensors))
	if want != nil && m.Type == msgResult {
		for _, t := range m.Tensors {
			if w, ok := want[t.Name]; !ok || w.dtype != t.DType || !slices.Equal(w.shape, t.Shape) {
				m.unread = true
				return &m, nil
			}
		}
	}
	for i, t := range m.Tensors {
		dt, known := dtypeNames[t.DType]
		if !known {
			if _, err := io.CopyN(io.Discard, r, t.NBytes); err != nil {
				return nil, err
			}
			continue
		}
		shape := append([]int{}, t.Shape...)
		var tt *tensor.Tensor
		switch dt {
		case tensor.Float32:
			tt = tensor.NewFloat32(shape...)
		case tensor.Float64:
			tt = tensor.NewFloat64(shape...)
		default:
			tt = tensor.NewInt64(shape...)
		}
		if err := readTensorData(r, tt); err != nil {
			return nil, err
		}
		m.decoded[i] = tt
	}
	return &m, nil
}

// quoteBytes shows up to 60 bytes as a Go string literal, marked when cut
// and headed "text" when they are printable text, "bytes" otherwise.
func quoteBytes(b []byte) string {
	cut := ""
	if len(b) > 60 {
		b, cut = b[:60], "…"
	}
	kind := "bytes"
	if printable(b) {
		kind = "text"
	}
	return fmt.Sprintf("%s %q%s", kind, b, cut)
}

func printable(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	for _, c := range string(b) {
		if c != '\n' && c != '\t' && c != '\r' && !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// isProtocolError reports whether err is a malformed message.
func isProtocolError(err error) bool {
	var pe *protocolError
	return errors.As(err, &pe)
}

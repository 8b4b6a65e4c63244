package isolate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// protocolVersion is sent in the worker's hello; the parent refuses any
// other (a stale or foreign worker binary).
const protocolVersion = "rxeq-isolate/3"

// Request kinds.
const (
	reqPrepare = "prepare"
	reqRun     = "run"
	reqBuild   = "build" // several programs, one library (native.CompileBatch)
)

// hello is the worker's first message.
type hello struct {
	Protocol string
	PID      int
}

// request is one call from the parent.
type request struct {
	Kind string
	// ID names the program a prepare or run is about: the worker holds
	// any number of programs, a prepare replacing the one of its ID.
	ID int
	// Drop lists programs the worker releases before serving the request.
	Drop []int

	// prepare
	Program *wireProgram
	// Options are the whole native.Options the worker builds with, as the
	// parent's executor has them: a library user's ProgramCC and cache
	// directories take effect in the worker as in process.
	Options native.Options
	// ORT, when set, makes the program one of ONNX Runtime's
	// (Executor.ONNXRuntime): the worker prepares it with these settings
	// and lazy sessions instead of building C.
	ORT *ort.Executor

	// run
	Func   string
	Inputs map[string]wireTensor
	// Call is how the call runs (native.Program.RunWith): the executor's
	// tile rows and kernel ISA, so that one program in one worker serves
	// native and each of its bit-identical variants.
	Call native.CallOptions
	// build: Programs[i] is held under IDs[i]
	IDs      []int
	Programs []*wireProgram
}

// response answers one request.
type response struct {
	Err *wireError

	// prepare
	Info   native.BuildInfo
	Source []byte

	// run
	Outputs map[string]wireTensor
	Path    executor.Name
	// build: one per program, in order
	Members []member
}

// member is how one program of a build went: held (Err nil, with its
// build information and C) or not (Err is the error a prepare of it alone
// gives).
type member struct {
	Err    *wireError
	Info   native.BuildInfo
	Source []byte
}

// wireTensor is a tensor with its data as raw little-endian bytes, so
// every bit (NaN payloads included) survives.
type wireTensor struct {
	DType tensor.DType
	Shape []int
	Data  []byte
}

func encodeTensors(m map[string]*tensor.Tensor) map[string]wireTensor {
	out := make(map[string]wireTensor, len(m))
	for name, t := range m {
		if t == nil {
			continue // arrives as missing, which BindInputs reports
		}
		out[name] = encodeTensor(t)
	}
	return out
}

func encodeTensor(t *tensor.Tensor) wireTensor {
	w := wireTensor{DType: t.DType, Shape: slices.Clone(t.Shape)} // nothing of t is kept (the worker releases its outputs)
	switch t.DType {
	case tensor.Float32:
		w.Data = make([]byte, 4*len(t.F32))
		for i, v := range t.F32 {
			binary.LittleEndian.PutUint32(w.Data[4*i:], math.Float32bits(v))
		}
	case tensor.Float64:
		w.Data = make([]byte, 8*len(t.F64))
		for i, v := range t.F64 {
			binary.LittleEndian.PutUint64(w.Data[8*i:], math.Float64bits(v))
		}
	case tensor.Int64:
		w.Data = make([]byte, 8*len(t.I64))
		for i, v := range t.I64 {
			binary.LittleEndian.PutUint64(w.Data[8*i:], uint64(v))
		}
	}
	return w
}

func decodeTensors(m map[string]wireTensor) (map[string]*tensor.Tensor, error) {
	out := make(map[string]*tensor.Tensor, len(m))
	for name, w := range m {
		t, err := decodeTensor(w)
		if err != nil {
			return nil, fmt.Errorf("%w: tensor %s: %v", ErrWorker, name, err)
		}
		out[name] = t
	}
	return out, nil
}

func decodeTensor(w wireTensor) (*tensor.Tensor, error) {
	t := &tensor.Tensor{DType: w.DType, Shape: w.Shape}
	if t.Shape == nil {
		t.Shape = []int{}
	}
	size := map[tensor.DType]int{tensor.Float32: 4, tensor.Float64: 8, tensor.Int64: 8}[w.DType]
	if size == 0 {
		return t, nil // an invalid dtype travels as is; BindInputs reports it
	}
	if len(w.Data)%size != 0 {
		return nil, fmt.Errorf("%d data bytes for dtype %s", len(w.Data), w.DType)
	}
	n := len(w.Data) / size
	switch w.DType {
	case tensor.Float32:
		t.F32 = make([]float32, n)
		for i := range t.F32 {
			t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(w.Data[4*i:]))
		}
	case tensor.Float64:
		t.F64 = make([]float64, n)
		for i := range t.F64 {
			t.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(w.Data[8*i:]))
		}
	case tensor.Int64:
		t.I64 = make([]int64, n)
		for i := range t.I64 {
			t.I64[i] = int64(binary.LittleEndian.Uint64(w.Data[8*i:]))
		}
	}
	return t, nil
}

// kinds are the sentinels an error keeps across the pipe, by name.
var kinds = []struct {
	name string
	err  error
}{
	{"ir.DivisionByZero", ir.ErrDivisionByZero},
	{"ir.Overflow", ir.ErrOverflow},
	{"ir.MissingInput", ir.ErrMissingInput},
	{"ir.UnknownInput", ir.ErrUnknownInput},
	{"ir.DType", ir.ErrDType},
	{"ir.Rank", ir.ErrRank},
	{"ir.Shape", ir.ErrShape},
	{"ir.Device", ir.ErrDevice},
	{"ir.Unsupported", ir.ErrUnsupported},
	{"native.TooLarge", native.ErrTooLarge},
	{"native.Unsupported", native.ErrUnsupported},
	{"native.Compiler", native.ErrCompiler},
	{"native.Cache", native.ErrCache},
	{"native.Load", native.ErrLoad},
	{"native.UnknownFunc", native.ErrUnknownFunc},
	{"native.Closed", native.ErrClosed},
	{"native.ISA", native.ErrISA},
	{"native.Internal", native.ErrInternal},
	{"native.Kernel", native.ErrKernel},
	{"native.NoTorch", native.ErrNoTorch},
	{"native.Unavailable", native.ErrUnavailable},
	{"isolate.Worker", ErrWorker},
	{"ort.Unavailable", ort.ErrUnavailable},
	{"ort.Closed", ort.ErrClosed},
	{"executor.Executor", executor.ErrExecutor},
}

func kindName(err error) string {
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return ""
}

func kindByName(name string) error {
	for _, k := range kinds {
		if k.name == name {
			return k.err
		}
	}
	return nil
}

// wireError is an error across the pipe: its whole text, its kind
// sentinel's name, and the *ir.RuntimeError in its chain, if any.
type wireError struct {
	Text string
	Kind string
	// Runtime is set when the chain holds an *ir.RuntimeError.
	Runtime                    bool
	RuntimeKind                string
	RuntimeFunc, RuntimeDetail string
	// ORT is set when the chain holds an *ort.Error (a failure of ONNX
	// Runtime itself), which the parent's error then wraps too.
	ORT *ort.Error
}

func encodeError(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Text: err.Error(), Kind: kindName(err)}
	var re *ir.RuntimeError
	if errors.As(err, &re) {
		w.Runtime, w.RuntimeKind, w.RuntimeFunc, w.RuntimeDetail = true, kindName(re.Kind), re.Func, re.Detail
	}
	var oe *ort.Error
	if errors.As(err, &oe) {
		w.ORT = &ort.Error{Code: oe.Code, Message: oe.Message}
	}
	return w
}

// decodeError rebuilds an error with the same text, the same kind
// (errors.Is) and, when there was one, an equal *ir.RuntimeError
// (errors.As), returned bare when it was the whole error.
func decodeError(w *wireError) error {
	if w == nil {
		return nil
	}
	if w.Runtime {
		re := &ir.RuntimeError{Kind: kindByName(w.RuntimeKind), Func: w.RuntimeFunc, Detail: w.RuntimeDetail}
		if re.Error() == w.Text {
			return re
		}
		return &remoteError{text: w.Text, wrapped: re}
	}
	if w.ORT != nil {
		return &remoteError{text: w.Text, wrapped: w.ORT}
	}
	return &remoteError{text: w.Text, wrapped: kindByName(w.Kind)}
}

// remoteError is an error the worker returned: its text, unwrapping to its
// kind (or to the runtime error that carries the kind).
type remoteError struct {
	text    string
	wrapped error
}

func (e *remoteError) Error() string { return e.text }
func (e *remoteError) Unwrap() error { return e.wrapped }

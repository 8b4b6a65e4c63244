//go:build cgo

package ort

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/rextio/rxeq/tensor"
)

// withCgo reports whether this build has the binding (without cgo every
// Open fails with ErrUnavailable).
const withCgo = true

// Library is one loaded ONNX Runtime shared library with its OrtEnv. A
// library is loaded once per process and path and never unloaded (ONNX
// Runtime's global state does not survive a dlclose); Open returns the
// same *Library for the same path.
type Library struct {
	path    string
	version string
	lib     C.rxort_lib
}

var (
	libsMu sync.Mutex
	libs   = map[string]*Library{}
	// liveSessions counts the sessions created and not yet closed, in
	// every library of the process (Sessions).
	liveSessions atomic.Int64
)

// disableTelemetry sets TelemetryEnv to 1 unless the user has set it.
// ONNX Runtime 1.30's Linux build records telemetry by default: a device
// id under ~/.cache/Microsoft, a file /tmp/mat-debug-PID.log per process
// that it never removes, an uploader, and file writes on every session
// created (about 0.7 ms of a session's 1.4 ms without optimizations,
// measured with BenchmarkSession). rxeq asks for none of it; the variable
// must be set before the library initializes, and the isolate worker
// inherits it. The OrtApi's DisableTelemetryEvents is called as well (in
// rxort_open), which stops the events but not the files.
func disableTelemetry() {
	if _, set := os.LookupEnv(TelemetryEnv); !set {
		_ = os.Setenv(TelemetryEnv, "1")
	}
}

// Open loads the ONNX Runtime library at path (dlopen with RTLD_NOW and
// RTLD_LOCAL), asks it for OrtApi version APIVersion and creates its
// OrtEnv, whose log messages go to the function SetLogger installs. A
// library that cannot be loaded, lacks OrtGetApiBase or is too old for
// APIVersion is an error wrapping ErrUnavailable; a failure of ONNX
// Runtime itself is an *Error. Loading again with the same path returns
// the library already loaded (and a failure is tried again).
func Open(path string) (*Library, error) {
	libsMu.Lock()
	defer libsMu.Unlock()
	if l := libs[path]; l != nil {
		return l, nil
	}
	disableTelemetry()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var lib C.rxort_lib
	st := C.rxort_open(cpath, C.RXORT_LOG_WARNING, &lib)
	if err := statusError(st); err != nil {
		switch st.code {
		case codeDlopen, codeSymbol:
			return nil, fmt.Errorf("%w: loading %s: %s", ErrUnavailable, path, err.(*Error).Message)
		case codeAPI:
			return nil, fmt.Errorf("%w: %s is ONNX Runtime %s, which does not serve C API version %d (ONNX Runtime %s or later does)",
				ErrUnavailable, path, err.(*Error).Message, APIVersion, minVersion)
		}
		return nil, fmt.Errorf("ort: creating the environment of %s: %w", path, err)
	}
	l := &Library{path: path, version: C.GoString(lib.version), lib: lib}
	libs[path] = l
	return l, nil
}

// APIVersion is the OrtApi version rxeq requests (RXORT_API_VERSION).
const APIVersion = C.RXORT_API_VERSION

// The codes rxort gives failures that are not ONNX Runtime's (capi.c).
const (
	codeDlopen = -1
	codeSymbol = -2
	codeAPI    = -3
)

// statusError turns an rxort_status into nil or an *Error, freeing its
// message.
func statusError(st C.rxort_status) error {
	if st.msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(st.msg))
	return &Error{Code: ErrorCode(st.code), Message: C.GoString(st.msg)}
}

// Path returns the file the library was loaded from.
func (l *Library) Path() string { return l.path }

// Version returns the library's own version (OrtApiBase.GetVersionString),
// "1.30.0" for the library rxeq is tested with.
func (l *Library) Version() string { return l.version }

// Session is one model loaded into ONNX Runtime with rxeq's settings. Run
// is safe for concurrent use; Close releases it, after which Run fails.
type Session struct {
	lib      *Library
	mu       sync.RWMutex // Run holds it shared, Close exclusively
	s        *C.OrtSession
	inNames  **C.char // C arrays of C strings, freed by Close
	outNames **C.char
	nIn      int
	nOut     int
}

// NewSession creates a session of model (the bytes of an ONNX model) with
// one intra-op and one inter-op thread, sequential execution, no spinning
// and the optimization level opts.Level. inputs and outputs are the names
// Run passes and reads, in the order it does; they must be the model's
// graph inputs and outputs, all of them. A model ONNX Runtime rejects is
// an *Error with its message.
func (l *Library) NewSession(model []byte, inputs, outputs []string, opts SessionOptions) (*Session, error) {
	if len(model) == 0 {
		return nil, fmt.Errorf("ort: creating a session: %w", &Error{Code: ErrInvalidArgument, Message: "empty model"})
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&model[0])
	var cs *C.OrtSession
	var nIn, nOut C.size_t
	st := C.rxort_session(&l.lib, unsafe.Pointer(&model[0]), C.size_t(len(model)), C.int(opts.Level.ort()), &cs, &nIn, &nOut)
	if err := statusError(st); err != nil {
		return nil, fmt.Errorf("ort: creating a session: %w", err)
	}
	s := &Session{lib: l, s: cs, nIn: len(inputs), nOut: len(outputs)}
	liveSessions.Add(1)
	if int(nIn) != len(inputs) || int(nOut) != len(outputs) {
		_ = s.Close()
		return nil, fmt.Errorf("ort: the model has %d inputs and %d outputs, want %d and %d", nIn, nOut, len(inputs), len(outputs))
	}
	s.inNames = cStrings(inputs)
	s.outNames = cStrings(outputs)
	return s, nil
}

// cStrings returns a malloc'd array of malloc'd copies of ss.
func cStrings(ss []string) **C.char {
	if len(ss) == 0 {
		return nil
	}
	arr := (**C.char)(C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	for i, p := range unsafe.Slice(arr, len(ss)) {
		_ = p
		unsafe.Slice(arr, len(ss))[i] = C.CString(ss[i])
	}
	return arr
}

func freeCStrings(arr **C.char, n int) {
	if arr == nil {
		return
	}
	for _, s := range unsafe.Slice(arr, n) {
		C.free(unsafe.Pointer(s))
	}
	C.free(unsafe.Pointer(arr))
}

// Close releases the session; closing again does nothing.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s == nil {
		return nil
	}
	C.rxort_release_session(&s.lib.lib, s.s)
	s.s = nil
	freeCStrings(s.inNames, s.nIn)
	freeCStrings(s.outNames, s.nOut)
	s.inNames, s.outNames = nil, nil
	liveSessions.Add(-1)
	return nil
}

// Run runs the session on inputs (in the order of the names given to
// NewSession) and writes its outputs into outputs, tensors the caller
// allocated with the shapes the model gives them: ONNX Runtime reads the
// inputs and writes the outputs in place, without copies, and fails
// (an *Error) when an output's shape or type is not the one allocated.
// Only float32 and int64 tensors are passed. When ctx ends during the run,
// ONNX Runtime is asked to terminate it and Run returns an error wrapping
// ctx.Err().
func (s *Session) Run(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	if len(inputs) != s.nIn || len(outputs) != s.nOut {
		return fmt.Errorf("ort: Run with %d inputs and %d outputs, want %d and %d", len(inputs), len(outputs), s.nIn, s.nOut)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	n := len(inputs) + len(outputs)
	ts := make([]C.rxort_tensor, n+1) // one spare, so &ts[len(inputs)] exists
	rank := 0
	for _, t := range inputs {
		rank += len(t.Shape)
	}
	for _, t := range outputs {
		rank += len(t.Shape)
	}
	dims := make([]C.int64_t, rank+1)
	pin.Pin(&dims[0])
	at := 0
	for i, t := range append(append(make([]*tensor.Tensor, 0, n), inputs...), outputs...) {
		ct := &ts[i]
		ct.rank = C.size_t(len(t.Shape))
		ct.dims = &dims[at]
		for _, d := range t.Shape {
			dims[at] = C.int64_t(d)
			at++
		}
		switch t.DType {
		case tensor.Float32:
			ct._type = C.RXORT_FLOAT
			if len(t.F32) > 0 {
				pin.Pin(&t.F32[0])
				ct.data = unsafe.Pointer(&t.F32[0])
				ct.bytes = C.size_t(4 * len(t.F32))
			}
		case tensor.Int64:
			ct._type = C.RXORT_INT64
			if len(t.I64) > 0 {
				pin.Pin(&t.I64[0])
				ct.data = unsafe.Pointer(&t.I64[0])
				ct.bytes = C.size_t(8 * len(t.I64))
			}
		default:
			return fmt.Errorf("ort: a %s tensor cannot be passed (float32 and int64 can)", t.DType)
		}
	}
	var ro *C.OrtRunOptions
	if ctx.Done() != nil {
		if err := statusError(C.rxort_run_options(&s.lib.lib, &ro)); err != nil {
			return fmt.Errorf("ort: creating run options: %w", err)
		}
		var mu sync.Mutex
		finished := false
		stop := context.AfterFunc(ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if !finished {
				C.rxort_terminate(&s.lib.lib, ro)
			}
		})
		defer func() {
			stop()
			mu.Lock()
			finished = true
			mu.Unlock()
			C.rxort_release_run_options(&s.lib.lib, ro)
		}()
	}
	st := C.rxort_run(&s.lib.lib, s.s, ro, s.inNames, &ts[0], C.size_t(len(inputs)), s.outNames, &ts[len(inputs)], C.size_t(len(outputs)))
	if err := statusError(st); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("ort: run terminated: %w (%w)", ctx.Err(), err)
		}
		return err
	}
	return nil
}

// Sessions returns how many sessions are open in this process (created by
// NewSession and not closed), for leak checks.
func Sessions() int { return int(liveSessions.Load()) }

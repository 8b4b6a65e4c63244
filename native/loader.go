package native

/*
#cgo CFLAGS: -I${SRCDIR}/runtime/csrc
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include "rx_runtime.h"

// rx_load opens a library with RTLD_NOW|RTLD_LOCAL; on failure it copies
// dlerror's text into err (of size n).
static void *rx_load(const char *path, char *err, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		size_t i = 0;
		for (; e && e[i] && i + 1 < n; i++) err[i] = e[i];
		err[i] = 0;
	}
	return h;
}

static void *rx_sym(void *h, const char *name) { return dlsym(h, name); }
static int rx_unload(void *h) { return dlclose(h); }

// rx_trampoline calls a generated function through its pointer.
static int rx_trampoline(void *fn, const rx_arg *args, rx_status *st) {
	return ((rx_entry)fn)(args, st);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/rextio/rxeq/tensor"
)

// library is a loaded shared object.
type library struct {
	handle unsafe.Pointer
	path   string
}

func loadLibrary(path string) (*library, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [512]C.char
	h := C.rx_load(cpath, &buf[0], C.size_t(len(buf)))
	if h == nil {
		return nil, fmt.Errorf("%w: dlopen %s: %s", ErrLoad, path, C.GoString(&buf[0]))
	}
	return &library{handle: h, path: path}, nil
}

func (l *library) symbol(name string) (unsafe.Pointer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	p := C.rx_sym(l.handle, cname)
	if p == nil {
		return nil, fmt.Errorf("%w: %s has no symbol %s", ErrLoad, l.path, name)
	}
	return p, nil
}

func (l *library) close() error {
	if C.rx_unload(l.handle) != 0 {
		return fmt.Errorf("%w: dlclose %s failed", ErrLoad, l.path)
	}
	return nil
}

// status mirrors rx_status for the Go side.
type status struct {
	code, a, b, c, d int64
	counters         Counters
}

// setArg describes tensor t in args[i] and pins its data. The rx_arg array
// is Go memory holding only pinned Go pointers, as the cgo rules require.
func (fr *frame) setArg(i int, t *tensor.Tensor) {
	a := &fr.args[i]
	var data unsafe.Pointer
	count := -1
	switch t.DType {
	case tensor.Float32:
		count = len(t.F32)
		if count > 0 {
			data = unsafe.Pointer(&t.F32[0])
		}
	case tensor.Int64:
		count = len(t.I64)
		if count > 0 {
			data = unsafe.Pointer(&t.I64[0])
		}
	case tensor.Float64:
		count = len(t.F64)
		if count > 0 {
			data = unsafe.Pointer(&t.F64[0])
		}
	}
	if t.Rank() > maxRank && t.Validate() != nil {
		count = -1 // malformed beyond what C can see
	}
	if data != nil {
		fr.pin.Pin(data)
	}
	a.data = data
	a.count = C.int64_t(count)
	a.dtype = C.int64_t(t.DType)
	a.rank = C.int64_t(t.Rank())
	for d := 0; d < t.Rank() && d < maxRank; d++ {
		a.dims[d] = C.int64_t(t.Shape[d])
	}
}

// invoke calls the generated function fn with the frame's arguments (set
// with setArg: inputs, then outputs) and its arena, without copying: each
// tensor's data stays in Go memory, pinned for the call. It unpins and
// forgets the tensors before it returns.
func (fr *frame) invoke(fn unsafe.Pointer) status {
	fr.st = C.rx_status{arena: fr.arena}
	var argp *C.rx_arg
	if len(fr.args) > 0 {
		argp = &fr.args[0]
	}
	C.rx_trampoline(fn, argp, &fr.st)
	fr.pin.Unpin()
	clear(fr.args)
	st := &fr.st
	return status{
		code: int64(st.code), a: int64(st.a), b: int64(st.b), c: int64(st.c), d: int64(st.d),
		counters: Counters{
			Calls:               1,
			BoundaryValidations: int64(st.boundary_validations),
			ResultValidations:   int64(st.result_validations),
			FactQueries:         int64(st.fact_queries),
			FactRequeries:       int64(st.fact_requeries),
			ArenaAllocs:         int64(st.arena_allocs),
			ArenaReleases:       int64(st.arena_releases),
			KernelCalls:         int64(st.kernel_calls),
			TrustedReuses:       int64(st.trusted_reuses),
		},
	}
}

//go:build cgo

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
*/
import "C"

import (
	"fmt"
	"unsafe"
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

//go:build cgo

package native

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// rx_torch_configure loads the torch runtime at path for the life of the
// process (RTLD_NODELETE: libtorch cannot be unloaded safely, and programs
// linked against the runtime then find it loaded) and calls its
// rx_aten_configure. It returns that function's result, or -2 when the
// library cannot be loaded or lacks the function; msg (n bytes) gets the
// libtorch version or the reason.
static int rx_torch_configure(const char *path, int threads, char *msg, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		const char *e = dlerror();
		size_t i = 0;
		for (; e && e[i] && i + 1 < n; i++) msg[i] = e[i];
		msg[i] = 0;
		return -2;
	}
	int (*f)(int, char *, size_t) = (int (*)(int, char *, size_t))dlsym(h, "rx_aten_configure");
	if (!f) {
		const char *e = "no symbol rx_aten_configure";
		size_t i = 0;
		for (; e[i] && i + 1 < n; i++) msg[i] = e[i];
		msg[i] = 0;
		dlclose(h);
		return -2;
	}
	int rc = f(threads, msg, n);
	dlclose(h);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// configureTorch loads the torch runtime library at path for the rest of
// the process and sets its intra-op thread count (threads < 1 means 1). It
// returns the libtorch version the runtime was compiled against.
//
// The thread count is libtorch's process-wide setting: every torch program
// of the process runs with the count of the latest configureTorch. The
// inter-op pool is set to one thread once per process.
func configureTorch(path string, threads int) (string, error) {
	if threads < 1 {
		threads = 1
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [512]C.char
	rc := C.rx_torch_configure(cpath, C.int(threads), &buf[0], C.size_t(len(buf)))
	msg := C.GoString(&buf[0])
	switch rc {
	case 0:
		return msg, nil
	case -2:
		return "", fmt.Errorf("%w: loading the torch runtime %s: %s", ErrLoad, path, msg)
	}
	return "", fmt.Errorf("%w: configuring the torch runtime %s: %s", ErrLoad, path, msg)
}

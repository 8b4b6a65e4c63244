//go:build !cgo

package native

// Without cgo nothing compiled can be loaded or called: this file stands
// in for loader.go, frame.go and torch_loader.go, and everything in it
// reports ErrUnavailable. Program.load stops with Available's error before
// it runs any compiler, so none of it is reached by a Compile.

import (
	"unsafe"

	"github.com/rextio/rxeq/tensor"
)

// withCgo reports whether this build can load and call compiled code.
const withCgo = false

// library is a shared object; without cgo none is ever loaded.
type library struct{}

func loadLibrary(string) (*library, error) { return nil, ErrUnavailable }

func (*library) symbol(string) (unsafe.Pointer, error) { return nil, ErrUnavailable }

func (*library) close() error { return nil }

// frame is one call's arguments; without cgo no call is made.
type frame struct {
	env symEnv
}

func (*frame) setArg(int, *tensor.Tensor) bool { return false }

// invoke reports an internal error: no generated function can have been
// loaded to call.
func (*frame) invoke(unsafe.Pointer, int, int, uint64, int64) status {
	return status{code: rxEInternal}
}

// tiling never tiles: no call is made.
func (*frame) tiling(*funcMeta, int) (int, uint64) { return 0, 0 }

// framePool hands out frames; without cgo it has none (get returns nil,
// which a call reports as ErrInternal) and its counters stay zero.
type framePool struct{}

func newFramePool() *framePool { return &framePool{} }

func (*framePool) get(int) *frame { return nil }

func (*framePool) put(*frame, *Counters) {}

func (*framePool) counters() Counters { return Counters{} }

func (*framePool) drain() {}

func configureTorch(string, int) (string, error) { return "", ErrUnavailable }

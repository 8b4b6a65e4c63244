package native

import "errors"

// ErrUnavailable: this build of rxeq cannot load or call compiled code,
// because it was built without cgo (CGO_ENABLED=0). Code generation
// (Generate, CFuncName) works in every build; Compile then fails with this
// error in Forced mode, and in Auto mode runs every function on the
// fallback interpreter with this error as NativeError. It concerns the
// native and the torch runtime alike.
var ErrUnavailable = errors.New("rxeq was built without cgo (CGO_ENABLED=0): rebuild with CGO_ENABLED=1 and a C compiler to run native and torch code")

// Available reports whether this build of rxeq can load and call the
// compiled C of the native and torch runtimes: nil when it was built with
// cgo, ErrUnavailable otherwise. It says nothing about the C compiler or
// libtorch, which Compile looks for.
func Available() error {
	if !withCgo {
		return ErrUnavailable
	}
	return nil
}

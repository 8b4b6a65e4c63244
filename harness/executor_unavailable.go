package harness

import (
	"slices"

	"github.com/rextio/rxeq/native"
)

// NativeAvailable reports whether this build of rxeq can run compiled C at
// all, and so the native and torch executors: nil, or an error wrapping
// native.ErrUnavailable when it was built without cgo (CGO_ENABLED=0).
// Code generation and source locks need no cgo and work either way.
func NativeAvailable() error { return native.Available() }

// LeaveOutNative adapts a list of executors to a build of rxeq without cgo
// (NativeAvailable fails): it drops the executors named native and torch,
// in process or in worker processes of this binary, and names each one it
// dropped in the returned Unavailable list with the reason (replacing an
// entry of unavailable for the same executor). With cgo it returns its
// arguments unchanged. Callers that build their own executor list use it
// where they would otherwise rely on DefaultExecutorSet, so that a run
// reports native and torch as not run rather than failing every case.
func LeaveOutNative(execs []Executor, unavailable []Unavailable) ([]Executor, []Unavailable) {
	err := NativeAvailable()
	if err == nil {
		return execs, unavailable
	}
	var kept []Executor
	out := slices.Clone(unavailable)
	for _, e := range execs {
		if e == nil || (e.Name() != PathNative && e.Name() != PathTorch) {
			kept = append(kept, e)
			continue
		}
		u := Unavailable{Executor: e.Name(), Reason: err.Error()}
		if i := slices.IndexFunc(out, func(o Unavailable) bool { return o.Executor == u.Executor }); i >= 0 {
			out[i] = u
		} else {
			out = append(out, u)
		}
	}
	return kept, out
}

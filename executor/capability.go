package executor

import (
	"context"
	"io"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// The optional interfaces below are what an executor can do beyond
// Prepare and Run. The runner, the fuzzer and rxginkgo ask for them with
// type assertions; an executor without one gets the documented default.
// None of them is needed to be compared: a user's executor implements
// Executor and Prepared and nothing else.

// MemoryProfile is how an executor holds a case in memory, for the
// runner's memory budget (harness.EstimateMemory).
type MemoryProfile struct {
	// FloatBytes is the size of its float elements: 4 (float32), 8 for an
	// executor that computes in float64 (the oracle).
	FloatBytes int
	// InPlace says it reads the runner's copy of the inputs in place
	// (fallback, native in process). Otherwise one more copy of the inputs
	// is counted, in its own precision (the oracle widens them, a worker
	// or an external process gets them encoded).
	InPlace bool
}

// MemoryProfiler is implemented by an executor whose memory profile is
// not the default (float32 elements, inputs copied once).
type MemoryProfiler interface {
	MemoryProfile() MemoryProfile
}

// ProfileOf returns e's memory profile, or the default.
func ProfileOf(e Executor) MemoryProfile {
	if mp, ok := e.(MemoryProfiler); ok {
		p := mp.MemoryProfile()
		if p.FloatBytes <= 0 {
			p.FloatBytes = 4
		}
		return p
	}
	return MemoryProfile{FloatBytes: 4}
}

// Rounder is implemented by a reference that computes in float64 and can
// run a function again with every op rounded to float32 (the oracle).
// When an executor disagrees with such a reference, the runner runs it
// once more to tell float32's own limits from the executor's fault
// (harness.Case.Blame).
type Rounder interface {
	RunRounded(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error)
}

// CompilerUser is implemented by an executor that runs compiled C (native
// and torch, in process or in a worker) and so needs a C compiler:
// rxginkgo labels its entries "native".
type CompilerUser interface {
	NeedsCompiler() bool
}

// NeedsCompiler reports whether e runs compiled C.
func NeedsCompiler(e Executor) bool {
	cu, ok := e.(CompilerUser)
	return ok && cu.NeedsCompiler()
}

// ByName is implemented by a Prepared program whose executor serves
// functions of its own by name instead of running the program it was
// given (see ErrByName). ServedByName returns the names it serves, or nil
// when it runs whatever program it is given.
type ByName interface {
	ServedByName() []string
}

// ServedByName returns the functions p serves by name (ByName), or nil.
func ServedByName(p Prepared) []string {
	if b, ok := p.(ByName); ok {
		return b.ServedByName()
	}
	return nil
}

// Prebuilder is an executor that can build several programs at once ahead
// of their Prepare (native code in a pooled worker: one compiler run and
// one library for all of them). Prebuild is only an optimisation: a
// program it did not build, or failed to, is prepared as usual, and what a
// program gives does not depend on whether it was prebuilt.
type Prebuilder interface {
	Prebuild(ctx context.Context, ps []*ir.Program) error
}

// Slotter is implemented by an executor that can hand one goroutine of a
// long campaign (the fuzzer's) a copy of itself that keeps its resources
// (a worker process) across programs. Slot returns that copy and what
// releases it; buildDir, when not "", is where the copy builds its
// programs (a directory of the slot's own that the caller may empty
// between programs). Campaigns use the executor as it is when it is not
// a Slotter.
type Slotter interface {
	Slot(buildDir string) (Executor, io.Closer)
}

// SlotSharer is implemented by an executor that can run in the slot of
// another executor (Slotter.Slot), sharing its resources: a variant that
// must give the bits of its twin (Twin) served by the twin's worker, which
// then builds and loads each program once for both. ShareSlot returns the
// copy of the executor that uses slot (released with slot), or false when
// slot cannot serve it; the copy's results are still its own.
type SlotSharer interface {
	ShareSlot(slot Executor) (Executor, bool)
}

// SlotOf returns a slot of e building into buildDir (Slotter.Slot) and
// what releases it, or, when e is not a Slotter, e itself and a Closer
// that does nothing.
func SlotOf(e Executor, buildDir string) (Executor, io.Closer) {
	if s, ok := e.(Slotter); ok {
		return s.Slot(buildDir)
	}
	return e, nopCloser{}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// BuildInfo says how a program of compiled code was built.
type BuildInfo struct {
	Compiler string // the first line of `$CC --version` (and of the program compiler's, when it differs)
	Library  string // the cached shared object's path ("" if none)
	Cached   bool   // whether the library came from the cache
	Runtime  string // the runtime library it is linked against
	// Framework is the version of the framework behind the runtime
	// ("libtorch 1.13.0 (…)" for torch; "" for native).
	Framework string
}

// Built is implemented by a Prepared program of compiled code: its
// generated source (checked by the source lock) and how it was built
// (reported with the preparation).
type Built interface {
	Prepared
	Source() []byte
	Info() BuildInfo
}

// FrameworkReporter is implemented by a Prepared program run by another
// framework that can say which versions it runs on (an external
// executor whose hello names them: the pytorch, torchscript and numpy
// executors say "numpy 1.24.2, python 3.11.2, torch 1.13.0"). The runner
// records it with the preparation and the reports show it.
type FrameworkReporter interface {
	Framework() string
}

// FrameworkOf returns what p says runs it: a compiled program's
// BuildInfo.Framework ("libtorch 1.13.0 (…)"), a FrameworkReporter's
// Framework(), or "" (rxeq's own executors, and executors that do not
// say).
func FrameworkOf(p Prepared) string {
	if b, ok := p.(Built); ok {
		return b.Info().Framework
	}
	if fr, ok := p.(FrameworkReporter); ok {
		return fr.Framework()
	}
	return ""
}

// Close closes e when it holds resources of its own (an io.Closer, such as
// an external executor's process), and does nothing otherwise.
func Close(e Executor) error {
	if c, ok := e.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// CloseAll closes every executor of execs that is an io.Closer.
func CloseAll(execs []Executor) {
	for _, e := range execs {
		_ = Close(e)
	}
}

// Twin is implemented by an executor that is a variant of another one and
// must compute exactly its bits: the same outputs bit for bit (a NaN
// matches any NaN) and the same errors (native-avx2 and native, which run
// the same C over kernels of another instruction set). The runner and the
// fuzzer compare such an executor with its twin whenever both ran, and
// report any difference as a mismatch naming both; a variant whose twin
// did not run is compared with the reference like any executor.
type Twin interface {
	// TwinOf names the executor whose bits this one must give; "" for
	// none.
	TwinOf() Name
}

// TwinOf returns the executor e must agree with bit for bit (Twin), or ""
// when e has none.
func TwinOf(e Executor) Name {
	if t, ok := e.(Twin); ok {
		return t.TwinOf()
	}
	return ""
}

// Readier is implemented by a Prepared program that runs in a process of
// its own which it may have to start (or restart, after a crash, a
// timeout or a protocol violation killed it) and prepare the program in
// again before a Run: an external executor, an isolate worker. That start
// is not the work of the case that happens to come next, so the runner
// calls Ready before each case's clock starts: Run, under the case
// timeout, then pays only for running.
//
// Ready brings up what a Run of fn needs: the process started, the
// program prepared in it, and the process free. It is bounded by the
// executor's own start timeout (and by ctx, which the runner does not
// bound by the case timeout); a start that takes longer than a case's
// timeout but less than the start timeout is not a failure of anything.
// An error means the start failed (it wraps ErrStart, ErrTimedOut, …,
// and says what it started): the runner reports the case as not run,
// with that error. Ready does nothing (and returns nil) when all is
// ready already, or when fn is not served (Run then says so). Ready must
// be safe for concurrent use; what it readies may fail again before Run
// (another case's fault), and Run then starts the process as it would
// without Ready.
type Readier interface {
	Ready(ctx context.Context, fn string) error
}

// Ready calls p.Ready when p is a Readier, and otherwise returns nil.
func Ready(ctx context.Context, p Prepared, fn string) error {
	if r, ok := p.(Readier); ok {
		return r.Ready(ctx, fn)
	}
	return nil
}

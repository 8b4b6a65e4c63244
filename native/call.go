package native

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Status codes and boundary codes of rx_runtime.h.
const (
	rxOK          = 0
	rxEBoundary   = 1
	rxEChecked    = 2
	rxENoMem      = 3
	rxEInternal   = 4
	rxESize       = 5
	rxEKernel     = 6
	rxBMalformed  = 100
	rxIResult     = 1
	rxIUntrusted  = 2
	rxIOutput     = 3
	rxIShapeOfOps = 4
)

// runNative calls the generated function. Go checks only what C cannot see
// (missing and unknown inputs) and sizes the outputs from the checked
// output shapes; dtype, rank, dims, device and non-null data are validated
// in C, on entry, once per call (a call in row tiles too: see tile.go).
//
// With into (RunInto), the outputs are the caller's tensors, checked
// against the output shapes, and nothing is allocated.
func (p *Program) runNative(ctx context.Context, c *compiled, inputs, into map[string]*tensor.Tensor, co callOpts) (*Result, error) {
	m := c.meta
	if err := ctx.Err(); err != nil {
		return nil, &ir.RuntimeError{Kind: err, Func: m.Func.Name, Detail: err.Error()}
	}
	fr, err := p.bindInputs(m, inputs)
	if err != nil {
		return nil, err
	}
	if into != nil {
		if err := bindInto(fr, m, into); err != nil {
			p.frames.put(fr, nil)
			return nil, err
		}
		_, err := p.call(fr, c, inputs, co)
		return nil, err
	}
	if len(m.Results) == 0 {
		// Nothing to allocate but the Result.
		isa, err := p.call(fr, c, inputs, co)
		if err != nil {
			return nil, err
		}
		return &Result{ISA: isa}, nil
	}
	res, err := allocOutputs(fr, m)
	if err != nil {
		p.frames.put(fr, nil)
		return nil, err
	}
	isa, err := p.call(fr, c, inputs, co)
	if err != nil {
		return nil, err
	}
	res.ISA = isa
	return res, nil
}

// call invokes the generated function with the frame's arguments as co
// says, puts the frame back with the call's counters and turns a failed
// status into the executors' error. It returns the instruction set the
// kernels ran at (Result.ISA).
func (p *Program) call(fr *frame, c *compiled, inputs map[string]*tensor.Tensor, co callOpts) (string, error) {
	st := p.invoke(fr, c, co)
	if err := co.inForce(c.name, st); err != nil {
		return "", err
	}
	if st.code != rxOK {
		return "", callError(c.meta, inputs, st)
	}
	return isaName(st.isa), nil
}

// invoke invokes the generated function with the frame's arguments, in
// row tiles when the call may run in them, with the kernels co asks for,
// and puts the frame back with the call's counters.
func (p *Program) invoke(fr *frame, c *compiled, co callOpts) status {
	tile, mask := p.tiling(fr, c.meta, co.tileRows)
	sym := 0
	if tile > 0 {
		sym = c.meta.rows.sym
	}
	st := fr.invoke(c.entry, tile, sym, mask, co.isaCap)
	p.frames.put(fr, &st.counters)
	return st
}

// tiling returns how a call with rows per tile tileRows
// (Options.TileRows) runs in row tiles (tile.go): the rows per tile (0:
// the body runs once) and the mask of the arguments that the tiles
// narrow. Only the native runtime tiles.
func (p *Program) tiling(fr *frame, m *funcMeta, tileRows int) (tile int, mask uint64) {
	if p.path != executor.Native || m.rows == nil || tileRows < 0 {
		return 0, 0
	}
	return fr.tiling(m, tileRows)
}

// CallOptions are how one call runs (Program.RunWith), whatever the
// Options the Program was compiled with: the settings that change no
// build, so that one loaded library serves native and its bit-identical
// variants (native-avx2, native-sse2, native-c, native-tiled) in one
// process.
type CallOptions struct {
	// TileRows is Options.TileRows for this call.
	TileRows int
	// ISA is Options.CallISA for this call: the instruction set of its
	// kernels, "" for the library's widest.
	ISA string
}

// Call returns the call settings of o (TileRows, CallISA): what
// Program.Run does with each call of a Program compiled with o.
func (o Options) Call() CallOptions { return CallOptions{TileRows: o.TileRows, ISA: o.CallISA} }

// Build returns o without its call settings (Call): the options that
// decide what is built and loaded, the same for native and each of its
// bit-identical variants.
func (o Options) Build() Options {
	o.TileRows, o.CallISA = 0, ""
	return o
}

// callOpts are CallOptions resolved against a Program.
type callOpts struct {
	tileRows int
	isaCap   int64 // rx_status.isa_cap: k+1 for runtime.ISAs[k], 0 for the widest
}

// resolve checks co against the program's runtime library and turns it
// into what the C call takes. An ISA that is not one of runtime.ISAs,
// above the library's widest, or asked of a runtime without ISAs (torch)
// is an error wrapping ErrISA.
func (p *Program) resolve(co CallOptions) (callOpts, error) {
	r := callOpts{tileRows: co.TileRows}
	if co.ISA == "" {
		return r, nil
	}
	k := slices.Index(runtime.ISAs, co.ISA)
	switch {
	case k < 0:
		return r, fmt.Errorf("%w: %q is not one of %s", ErrISA, co.ISA, strings.Join(runtime.ISAs, ", "))
	case p.path != executor.Native:
		return r, fmt.Errorf("%w: the %s runtime has no kernels of its own to run at %s", ErrISA, p.path, co.ISA)
	case k > p.maxISA:
		return r, fmt.Errorf("%w: the runtime library runs its kernels at %s at most, not %s", ErrISA, isaName(int64(p.maxISA)+1), co.ISA)
	}
	r.isaCap = int64(k) + 1
	return r, nil
}

// inForce checks that a call of function fn that asked for the kernels
// of one instruction set ran them (the runtime reports the set it chose
// in rx_status.isa): a variant's result is that variant's, or an error
// wrapping ErrISA and ErrInternal.
func (co callOpts) inForce(fn string, st status) error {
	if co.isaCap == 0 || st.isa == co.isaCap {
		return nil
	}
	return fmt.Errorf("%w: %w: %s: the call asked for the %s kernels and ran the %q ones", ErrInternal, ErrISA, fn, isaName(co.isaCap), isaName(st.isa))
}

// isaName names rx_status.isa (k+1 for runtime.ISAs[k]); "" for 0, a
// runtime without ISAs.
func isaName(v int64) string {
	if v < 1 || v > int64(len(runtime.ISAs)) {
		return ""
	}
	return runtime.ISAs[v-1]
}

// bindInputs takes a frame and describes each parameter's input in it, in
// parameter order, looked up by name once (map lookups are a good part of
// a small call's cost). A missing or unknown input is reported exactly as
// ir.BindInputs does (the same order and texts); the rest of the checks
// run in C. It also binds the symbols the way the C prologue does (first
// occurrence, parameter order) from the well-formed inputs of the right
// rank, without judging them: this only sizes the outputs.
func (p *Program) bindInputs(m *funcMeta, inputs map[string]*tensor.Tensor) (*frame, error) {
	fn := m.Func.Name
	fr := p.frames.get(len(m.Params) + len(m.Results))
	if fr == nil {
		if err := checkInputNames(fn, m.Params, inputs); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: out of memory allocating a call frame", ErrInternal, fn)
	}
	fr.env.bound = 0
	for i := range m.Params {
		t := inputs[m.Params[i].Name]
		if t == nil {
			p.frames.put(fr, nil)
			return nil, checkInputNames(fn, m.Params, inputs)
		}
		fr.bindParam(i, t, m.ParamDims[i])
	}
	if len(inputs) != len(m.Params) {
		p.frames.put(fr, nil)
		return nil, checkInputNames(fn, m.Params, inputs)
	}
	return fr, nil
}

// bindParam describes input t of parameter i (of dims) in the frame and
// binds the symbols it is the first to bind, when it is well formed and
// of the right rank (C judges it).
func (fr *frame) bindParam(i int, t *tensor.Tensor, dims []int) {
	if !fr.setArg(i, t) || len(t.Shape) != len(dims) {
		return
	}
	env := &fr.env
	for d, spec := range dims {
		if k := -spec - 1; spec < 0 && env.bound&(1<<k) == 0 {
			env.sym[k] = t.Shape[d]
			env.bound |= 1 << k
		}
	}
}

// symEnv is the symbols a call's inputs bind, for sizing its outputs:
// sym[k] is symbol k's size when bit k of bound is set.
type symEnv struct {
	sym   [maxSyms]int
	bound uint32
}

// allocOutputs allocates the output tensors of a Run (sized from the
// symbols the inputs bind), describes them in the frame and returns the
// Result that holds them. Everything a Run returns is one allocation when
// the outputs are small (the Result, its map aside: see outBlock), and
// nothing at all when an earlier Result of the same function and sizes
// was given back with Result.Release.
func allocOutputs(fr *frame, m *funcMeta) (*Result, error) {
	fn := m.Func.Name
	env := &fr.env
	// The outputs' sizes in elements (the first few; the rest are counted
	// again below) and in int64 words: one backing array that float32
	// outputs view, each output starting on a word.
	var counts [4]int
	words := 0
	for j, r := range m.Results {
		n, overflow := 1, false
		for _, s := range m.OutDims[j] {
			d := s
			if s < 0 {
				d = 0 // unbound: the inputs are invalid and C reports it first
				if env.bound&(1<<(-s-1)) != 0 {
					d = env.sym[-s-1]
				}
			}
			if d != 0 && n > math.MaxInt/d {
				overflow = true
			}
			n *= d
		}
		if overflow || n > math.MaxInt/8 {
			return nil, sizeError(fn, "output "+r.Name, outShape(m.OutDims[j], env))
		}
		if j < len(counts) {
			counts[j] = n
		}
		if r.Type.DType == ir.Int64 {
			words += n
		} else {
			words += (n + 1) / 2
		}
		if words < 0 || words > math.MaxInt/8 {
			return nil, sizeError(fn, "output "+r.Name, outShape(m.OutDims[j], env))
		}
	}
	blk, _ := m.outs.Get().(*outBlock)
	if blk == nil || len(blk.data) != words {
		blk = newOutBlock(len(m.Results), m.OutRanks, words)
		blk.fn = m
	}
	shapes, data := blk.dims, blk.data
	off := 0
	np := len(m.Params)
	for j, r := range m.Results {
		t := &blk.ts[j]
		spec := m.OutDims[j]
		shape := shapes[:len(spec):len(spec)]
		shapes = shapes[len(spec):]
		for i, s := range spec {
			d := s
			if s < 0 {
				d = 0
				if env.bound&(1<<(-s-1)) != 0 {
					d = env.sym[-s-1]
				}
			}
			shape[i] = d
		}
		if len(spec) == 0 {
			shape = nil
		}
		t.Shape = shape
		n := 0
		if j < len(counts) {
			n = counts[j]
		} else {
			n = tensor.NumElements(shape)
		}
		if r.Type.DType == ir.Int64 {
			t.DType, t.I64, t.F32 = tensor.Int64, data[off:off+n:off+n], nil
			off += n
		} else {
			t.DType, t.F32, t.I64 = tensor.Float32, []float32{}, nil
			if n > 0 {
				t.F32 = unsafe.Slice((*float32)(unsafe.Pointer(&data[off])), n)
			}
			off += (n + 1) / 2
		}
		blk.out[r.Name] = t
		fr.setArg(np+j, t)
	}
	blk.res = Result{Outputs: blk.out, blk: blk}
	return &blk.res, nil
}

// outShape is the shape a result of dims spec has under env (0 for an
// unbound symbol), for an error.
func outShape(spec []int, env *symEnv) []int {
	shape := make([]int, len(spec))
	for i, s := range spec {
		switch {
		case s >= 0:
			shape[i] = s
		case env.bound&(1<<(-s-1)) != 0:
			shape[i] = env.sym[-s-1]
		}
	}
	return shape
}

// Release gives the memory of r's outputs back to the Program that
// returned r, for a later Run of the same function with outputs of the
// same sizes to reuse: a loop that scores batch after batch and is done
// with each Result before the next Run then allocates nothing (no
// collections, no page faults), as with RunInto. After Release, neither
// r nor any of its output tensors (nor slices of their data) may be used:
// their memory holds a later call's outputs. Release is optional (a
// Result that is not released is garbage collected as usual), idempotent,
// and does nothing for a Result that did not come from a native Run.
func (r *Result) Release() {
	blk := r.blk
	if blk == nil {
		return
	}
	r.blk, r.Outputs = nil, nil
	blk.fn.outs.Put(blk)
}

// bindInto describes the caller's output tensors (RunInto) in the frame
// after checking each against its result's dtype and the shape the inputs
// bind; an unbound symbol (invalid inputs) leaves the check to C's
// boundary validation, which runs first.
func bindInto(fr *frame, m *funcMeta, into map[string]*tensor.Tensor) error {
	fn := m.Func.Name
	if len(into) != len(m.Results) {
		for name := range into {
			if !m.hasResult(name) {
				return &ir.RuntimeError{Kind: ir.ErrShape, Func: fn, Detail: fmt.Sprintf("RunInto: no result named %s", name)}
			}
		}
	}
	for j, r := range m.Results {
		if err := fr.bindOut(m, j, into[r.Name]); err != nil {
			return err
		}
	}
	return nil
}

// bindOut describes the caller's tensor t as output j (RunInto) in the
// frame after checking it against its result's dtype and the shape the
// inputs bind (bindInto).
func (fr *frame) bindOut(m *funcMeta, j int, t *tensor.Tensor) error {
	fn, r := m.Func.Name, m.Results[j]
	env := &fr.env
	want := tensor.Float32
	if r.Type.DType == ir.Int64 {
		want = tensor.Int64
	}
	dims := m.OutDims[j]
	// setArg describes t (a frame put back forgets it) and reports
	// whether it is well formed.
	if t == nil || t.DType != want || len(t.Shape) != len(dims) || !fr.setArg(len(m.Params)+j, t) {
		return &ir.RuntimeError{Kind: ir.ErrShape, Func: fn,
			Detail: fmt.Sprintf("RunInto: output %s must be a well-formed %s tensor of rank %d", r.Name, want, len(dims))}
	}
	for i, s := range dims {
		d := s
		if s < 0 {
			if env.bound&(1<<(-s-1)) == 0 {
				continue
			}
			d = env.sym[-s-1]
		}
		if t.Shape[i] != d {
			return &ir.RuntimeError{Kind: ir.ErrShape, Func: fn,
				Detail: fmt.Sprintf("RunInto: output %s has shape %v, the inputs make it %s", r.Name, t.Shape, r.Type)}
		}
	}
	return nil
}

// wellFormed reports whether t.Validate() returns nil, without building an
// error: a known dtype, no negative dimension and data of exactly as many
// elements as the shape describes, at most tensor.MaxElements. It is
// Validate's verdict for the hot path (a spec compares the two).
func wellFormed(t *tensor.Tensor) bool {
	switch t.DType {
	case tensor.Float32:
		return shapeHolds(t.Shape, len(t.F32))
	case tensor.Int64:
		return shapeHolds(t.Shape, len(t.I64))
	case tensor.Float64:
		return shapeHolds(t.Shape, len(t.F64))
	}
	return false
}

// shapeHolds reports whether shape has no negative dimension and describes
// exactly n elements, n <= tensor.MaxElements (so the product is never
// computed past n: it cannot overflow).
func shapeHolds(shape []int, n int) bool {
	k := uint64(1) // the product so far, or n+1 once it is known to exceed n
	for _, d := range shape {
		if d <= 0 {
			if d < 0 {
				return false
			}
			k = 0
			continue
		}
		// A multiply, not a division: this runs for every dim of every
		// tensor of every call.
		if hi, lo := bits.Mul64(k, uint64(d)); hi != 0 || lo > uint64(n) {
			k = uint64(n) + 1
		} else {
			k = lo
		}
	}
	return k == uint64(n) && n <= tensor.MaxElements
}

// outBlock holds what a Run returns: the Result, the output tensors and
// their shapes, the map of the Result's Outputs and the outputs' data
// (words: int64 outputs use them as they are, float32 outputs view them).
// A released block (Result.Release) goes back to its function's pool.
type outBlock struct {
	res  Result
	ts   []tensor.Tensor
	dims []int
	data []int64
	out  map[string]*tensor.Tensor
	fn   *funcMeta
}

// smallOutBlock is an outBlock with room for up to 3 outputs of 8 dims in
// all (the reference scenario's) and smallWords words of data, so that a
// small Run allocates it and the map, nothing else. The words are an
// array in a typed struct: the collector knows they hold no pointers.
type smallOutBlock struct {
	outBlock
	ts    [3]tensor.Tensor
	dims  [8]int
	words [smallWords]int64
}

// smallWords is the data a smallOutBlock holds: the outputs of one row of
// the reference functions (9 words), with room to spare; more would make
// every small Run's allocation larger.
const smallWords = 16

func newOutBlock(results, dims, words int) *outBlock {
	var b *outBlock
	if results <= 3 && dims <= 8 && words <= smallWords {
		s := &smallOutBlock{}
		s.outBlock.ts, s.outBlock.dims, s.outBlock.data = s.ts[:results], s.dims[:dims], s.words[:words:words]
		b = &s.outBlock
	} else if results <= 3 && dims <= 8 {
		s := &smallOutBlock{}
		s.outBlock.ts, s.outBlock.dims = s.ts[:results], s.dims[:dims]
		b = &s.outBlock
	} else {
		b = &outBlock{ts: make([]tensor.Tensor, results), dims: make([]int, dims)}
	}
	if b.data == nil {
		b.data = make([]int64, words)
	}
	b.out = make(map[string]*tensor.Tensor, results)
	return b
}

// checkInputNames reports a missing or unknown input exactly as
// ir.BindInputs does (the same order and texts), or nil.
func checkInputNames(fn string, params []ir.ParamSpec, inputs map[string]*tensor.Tensor) error {
	for _, p := range params {
		if inputs[p.Name] == nil {
			return &ir.RuntimeError{Kind: ir.ErrMissingInput, Func: fn, Detail: fmt.Sprintf("missing input %s (%s)", p.Name, p.Type)}
		}
	}
	if len(inputs) != len(params) {
		// Let ir.BindInputs find and word the unknown name.
		bad := map[string]*tensor.Tensor{}
		known := map[string]bool{}
		for _, p := range params {
			known[p.Name] = true
		}
		for name, t := range inputs {
			if !known[name] {
				bad[name] = t
			}
		}
		return unknownInput(fn, bad)
	}
	return nil
}

func unknownInput(fn string, bad map[string]*tensor.Tensor) error {
	_, err := ir.BindInputs(fn, nil, bad)
	return err
}

// replayEnv rebuilds the bindings C had made when it stopped at dimension
// dim of parameter param, for the message of a symbolic-dimension mismatch.
func replayEnv(params []ir.ParamSpec, inputs map[string]*tensor.Tensor, param, dim int) (map[string]int64, map[string]string) {
	env, owner := map[string]int64{}, map[string]string{}
	for i := 0; i <= param && i < len(params); i++ {
		p := params[i]
		t := inputs[p.Name]
		for d, s := range p.Type.Shape {
			if i == param && d >= dim {
				break
			}
			if _, ok := env[s.Sym]; s.IsSym() && !ok && d < t.Rank() {
				env[s.Sym] = int64(t.Shape[d])
				owner[s.Sym] = p.Name
			}
		}
	}
	return env, owner
}

// callError turns a C status into the error every executor returns.
func callError(m *funcMeta, inputs map[string]*tensor.Tensor, st status) error {
	fn := m.Func.Name
	switch st.code {
	case rxEBoundary:
		param, code, dim, got := int(st.a), int(st.b), int(st.c), st.d
		if param < 0 || param >= len(m.Params) {
			break
		}
		p := m.Params[param]
		if code == rxBMalformed {
			return &ir.RuntimeError{Kind: ir.ErrShape, Func: fn, Detail: fmt.Sprintf("input %s: %v", p.Name, inputs[p.Name].Validate())}
		}
		env, owner := replayEnv(m.Params, inputs, param, dim)
		return ir.BoundaryError(fn, m.Params, param, code, dim, got, env, owner)
	case rxEChecked:
		if st.a >= 0 && int(st.a) < len(m.Sites) {
			return ir.CheckedError(m.Sites[st.a], st.b, st.c)
		}
	case rxESize:
		name := "an intermediate value"
		for v, k := range m.SlotOf {
			if int64(k) == st.a && v.Name != "" {
				name = v.Name
			}
		}
		return &ir.RuntimeError{Kind: ir.ErrShape, Func: fn,
			Detail: fmt.Sprintf("the size of %s overflows int64 (at dimension %d): the shape is too large for any executor", name, st.b)}
	case rxEKernel:
		return kernelError(fn, st.a)
	case rxENoMem:
		if st.a == 0 && st.b > 0 {
			return fmt.Errorf("%w: %s: out of memory in the framework kernel of %s", ErrInternal, fn, KernelOp(st.b))
		}
		return fmt.Errorf("%w: %s: out of memory allocating %d bytes", ErrInternal, fn, st.a)
	case rxEInternal:
		what := map[int64]string{rxIResult: "an op result failed validation", rxIUntrusted: "an operand was read before its facts were validated",
			rxIOutput: "an output buffer does not match its checked shape", rxIShapeOfOps: "operand shapes do not fit an op"}[st.a]
		return fmt.Errorf("%w: %s: %s (slot %d, dim %d, got %d)", ErrInternal, fn, what, st.b, st.c, st.d)
	}
	return fmt.Errorf("%w: %s: unknown status %d (%d %d %d %d)", ErrInternal, fn, st.code, st.a, st.b, st.c, st.d)
}

// sizeError is the error of a tensor whose element count or byte size does
// not fit in int64 (or in the address space): what names the tensor.
func sizeError(fn, what string, shape []int) error {
	return &ir.RuntimeError{Kind: ir.ErrShape, Func: fn,
		Detail: fmt.Sprintf("the size of %s %v overflows int64: the shape is too large for any executor", what, shape)}
}

// hasResult reports whether the function has a result of that name.
func (m *funcMeta) hasResult(name string) bool {
	for _, r := range m.Results {
		if r.Name == name {
			return true
		}
	}
	return false
}

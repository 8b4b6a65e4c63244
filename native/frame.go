//go:build cgo

package native

/*
#include <stdlib.h>
#include "rx_runtime.h"

// rx_frame is the C side of one call's frame: the status and the rx_arg
// array, in C memory, so that a call passes only C pointers and the tensors'
// data pointers to C.
typedef struct rx_frame {
	rx_status st;
	int64_t cap;
	rx_arg args[];
} rx_frame;

// rx_frame_new returns a zeroed frame with room for n arguments and its
// arena (NULL when out of memory).
static rx_frame *rx_frame_new(int64_t n) {
	rx_frame *f = calloc(1, sizeof(rx_frame) + (size_t)(n > 0 ? n : 1) * sizeof(rx_arg));
	if (!f)
		return NULL;
	f->cap = n;
	f->st.arena = calloc(1, sizeof(rx_arena)); // NULL: calls use arenas of their own
	return f;
}

// rx_frame_args returns the frame's argument array.
static rx_arg *rx_frame_args(rx_frame *f) { return f->args; }

// rx_frame_free frees a frame and its arena.
static void rx_frame_free(rx_frame *f) {
	if (f) {
		rx_arena_free(f->st.arena);
		free(f);
	}
}

// RX_DIRECT is how many data pointers a call passes as arguments.
#define RX_DIRECT 12

// rx_frame_begin readies frame f for a call with n arguments whose first
// RX_DIRECT data pointers are p: a zeroed status that keeps the frame's
// arena, and the data pointers in args.
static inline void rx_frame_begin(rx_frame *f, int64_t n, void *const *p) {
	rx_arena *arena = f->st.arena;
	f->st = (rx_status){0};
	f->st.arena = arena;
	for (int64_t i = 0; i < n && i < RX_DIRECT; i++)
		f->args[i].data = p[i];
}

// rx_frame_end clears every data pointer of f's n arguments, so that no Go
// pointer stays in C memory.
static inline void rx_frame_end(rx_frame *f, int64_t n) {
	for (int64_t i = 0; i < n; i++)
		f->args[i].data = NULL;
}

// rx_call calls the generated function fn with the frame's arguments. The
// first min(n, RX_DIRECT) tensors' data pointers arrive as arguments (Go
// memory, kept alive by the call itself, as cgo passes them; typed as float
// so that cgo knows the memory holds no Go pointers, whatever its dtype);
// the rest are already in args, pinned by Go. tile > 0 asks the call to run
// its body in row tiles of tile rows of symbol sym over the arguments in
// mask (native/tile.go), inside its one context (rx_tile); isa_cap asks
// for the kernels of one instruction set (rx_status.isa_cap). Every data
// pointer is cleared before it returns, so no Go pointer stays in C memory.
// fn and f are C pointers passed as integers, which cgo need not check.
static int rx_call(uintptr_t fnp, uintptr_t fp, int64_t n, int64_t tile, int64_t sym, uint64_t mask, int64_t isa_cap,
		   float *p0, float *p1, float *p2, float *p3, float *p4, float *p5,
		   float *p6, float *p7, float *p8, float *p9, float *p10, float *p11) {
	rx_frame *f = (rx_frame *)fp;
	void *p[RX_DIRECT] = {p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11};
	rx_frame_begin(f, n, p);
	f->st.tile_rows = tile;
	f->st.tile_sym = sym;
	f->st.tile_mask = mask;
	f->st.isa_cap = isa_cap;
	int rc = ((rx_entry)(void *)fnp)(f->args, &f->st);
	rx_frame_end(f, n);
	return rc;
}
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/rextio/rxeq/tensor"
)

// direct is how many data pointers a call passes to C as arguments
// (RX_DIRECT); the data of further tensors is pinned.
const direct = 12

// frame is the Go side of one call: the C frame (status and rx_arg array,
// reused from call to call, so a call allocates neither), the data
// pointers of the first direct tensors, the pinner for the rest, and the
// arena lent to the call (in the C frame). A frame serves one call at a
// time.
type frame struct {
	c      *C.rx_frame // nil if it could not be allocated
	all    []C.rx_arg  // c's argument array (C memory)
	args   []C.rx_arg  // the call's arguments: all[:n]
	ptrs   [direct]*C.float
	pin    runtime.Pinner
	pinned bool
	sum    Counters // the counters of the calls this frame served since the pool last folded them
	env    symEnv   // the symbols the running call's inputs bind (call.go)
}

// framePool is a Program's pool of frames and their arenas. It is process
// memory of the Program, not a tensor cache: a call takes a frame, its
// arena holds the call's intermediates only while the call runs (every
// buffer is written by its op before anything reads it), and the frame
// goes back when the call ends. Arenas are freed by Close, or at once when
// the pool already holds max frames (plus the hot one). Each frame sums the
// counters of the calls it served (its owner writes them, so a call that
// puts its frame back as the hot one takes no lock); counters adds up the
// pooled frames' sums and those of frames freed before, under the lock.
type framePool struct {
	hot  atomic.Pointer[frame] // the last frame put back: get takes it without the lock
	mu   sync.Mutex
	free []*frame
	max  int
	sum  Counters
}

func newFramePool() *framePool {
	return &framePool{max: max(runtime.GOMAXPROCS(0), 2)}
}

// get returns a frame with room for n arguments, or nil when C memory for
// it cannot be allocated.
func (p *framePool) get(n int) *frame {
	fr := p.hot.Swap(nil)
	if fr == nil {
		p.mu.Lock()
		if k := len(p.free); k > 0 {
			fr = p.free[k-1]
			p.free[k-1] = nil
			p.free = p.free[:k-1]
		}
		p.mu.Unlock()
	}
	if fr == nil {
		fr = &frame{}
	}
	if fr.c == nil || int(fr.c.cap) < n {
		C.rx_frame_free(fr.c)
		fr.c = C.rx_frame_new(C.int64_t(max(n, 4)))
		if fr.c == nil {
			p.mu.Lock()
			p.sum.add(&fr.sum) // the frame is dropped: keep what it counted
			p.mu.Unlock()
			return nil
		}
		fr.all = unsafe.Slice(C.rx_frame_args(fr.c), int(fr.c.cap))
	}
	fr.args = fr.all[:n:n]
	return fr
}

// put returns a frame after its call and adds the call's counters to the
// frame's sum.
func (p *framePool) put(fr *frame, s *Counters) {
	fr.forget()
	if s != nil {
		fr.sum.add(s)
	}
	if p.hot.CompareAndSwap(nil, fr) {
		return
	}
	p.mu.Lock()
	if len(p.free) < p.max {
		p.free = append(p.free, fr)
		fr = nil
	} else {
		p.sum.add(&fr.sum)
	}
	p.mu.Unlock()
	if fr != nil {
		C.rx_frame_free(fr.c)
	}
}

// counters returns the sum of the counters of the calls so far that have
// put their frames back. It takes the hot frame out of the pool while it
// reads its sum, so that no call writes that sum meanwhile.
func (p *framePool) counters() Counters {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum := p.sum
	for _, fr := range p.free {
		sum.add(&fr.sum)
	}
	if fr := p.hot.Swap(nil); fr != nil {
		sum.add(&fr.sum)
		if !p.hot.CompareAndSwap(nil, fr) {
			p.free = append(p.free, fr) // may exceed max by one until Close
		}
	}
	return sum
}

// drain frees every pooled frame (Close; no call is running).
func (p *framePool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fr := p.hot.Swap(nil); fr != nil {
		p.sum.add(&fr.sum)
		C.rx_frame_free(fr.c)
	}
	for _, fr := range p.free {
		p.sum.add(&fr.sum)
		C.rx_frame_free(fr.c)
	}
	p.free = nil
}

// add adds t's fields to s.
func (s *Counters) add(t *Counters) {
	s.Calls += t.Calls
	s.Invocations += t.Invocations
	s.Tiles += t.Tiles
	s.BoundaryValidations += t.BoundaryValidations
	s.ResultValidations += t.ResultValidations
	s.FactQueries += t.FactQueries
	s.FactRequeries += t.FactRequeries
	s.ArenaAllocs += t.ArenaAllocs
	s.ArenaReleases += t.ArenaReleases
	s.FallbackRuns += t.FallbackRuns
	s.KernelCalls += t.KernelCalls
	s.TrustedReuses += t.TrustedReuses
}

// setArg describes tensor t in argument i: its data pointer goes to C as a
// call argument (i < direct) or pinned in the C frame, never as an unpinned
// Go pointer in memory that C reads. It reports whether t is well formed
// (wellFormed: what t.Validate() says, without building an error), which
// the description holds for C to check again: a count that matches the
// dims, or -1 for a tensor malformed beyond what C can see (rank above
// maxRank).
func (fr *frame) setArg(i int, t *tensor.Tensor) bool {
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
	ok := count >= 0 && shapeHolds(t.Shape, count)
	rank := len(t.Shape)
	if rank > maxRank && !ok {
		count = -1 // malformed beyond what C can see
	}
	if i < direct {
		fr.ptrs[i] = (*C.float)(data)
	} else {
		if data != nil {
			fr.pin.Pin(data)
			fr.pinned = true
		}
		a.data = data
	}
	a.count = C.int64_t(count)
	a.dtype = C.int64_t(t.DType)
	a.rank = C.int64_t(rank)
	for d := 0; d < rank && d < maxRank; d++ {
		a.dims[d] = C.int64_t(t.Shape[d])
	}
	return ok
}

// tiling returns how the frame's call of m runs in row tiles (tile.go):
// the rows per tile (0: the body runs once) and the mask of the arguments
// whose dim 0 is the batch. The call validates its inputs once, on entry,
// before its first tile, so an invalid call fails as an untiled one;
// tiles are asked for only when every argument is well formed (what the
// tiles' pointer arithmetic relies on) and no output shares memory with
// an input or another output.
func (fr *frame) tiling(m *funcMeta, override int) (tile int, mask uint64) {
	plan, env := m.rows, &fr.env
	if env.bound&(1<<plan.sym) == 0 {
		return 0, 0
	}
	if tile = plan.tileRows(env, env.sym[plan.sym], override); tile == 0 {
		return 0, 0
	}
	for i := range fr.args {
		if fr.args[i].count < 0 {
			return 0, 0
		}
	}
	if fr.overlaps(len(m.Params)) {
		return 0, 0
	}
	return tile, plan.mask
}

// overlaps reports whether an output's data (arguments np and after)
// shares memory with an input's or another output's.
func (fr *frame) overlaps(np int) bool {
	span := func(i int) (lo, hi uintptr) {
		a := &fr.args[i]
		p := uintptr(a.data)
		if i < direct {
			p = uintptr(unsafe.Pointer(fr.ptrs[i]))
		}
		size := uintptr(4)
		if a.dtype != C.int64_t(tensor.Float32) {
			size = 8
		}
		return p, p + uintptr(a.count)*size
	}
	for o := np; o < len(fr.args); o++ {
		olo, ohi := span(o)
		for i := range o {
			if ilo, ihi := span(i); olo < ihi && ilo < ohi {
				return true
			}
		}
	}
	return false
}

// forget unpins and drops the tensors of the last call.
func (fr *frame) forget() {
	if fr.pinned {
		fr.pin.Unpin()
		fr.pinned = false
	}
	for i := range min(len(fr.args), direct) {
		fr.ptrs[i] = nil
	}
}

// invoke calls the generated function fn with the frame's arguments (set
// with setArg: inputs, then outputs) and its arena, without copying: each
// tensor's data stays in Go memory for the call. tile > 0 runs the body in
// row tiles of tile rows of symbol sym over the arguments in mask (bit i:
// argument i), inside the call's one context (native/tile.go says when
// that is allowed). C clears the data pointers it was given before it
// returns; the frame forgets (and unpins) the tensors when it is put back,
// which every caller does right after. isaCap is rx_status.isa_cap.
func (fr *frame) invoke(fn unsafe.Pointer, tile, sym int, mask uint64, isaCap int64) status {
	q := &fr.ptrs
	C.rx_call(C.uintptr_t(uintptr(fn)), C.uintptr_t(uintptr(unsafe.Pointer(fr.c))), C.int64_t(len(fr.args)),
		C.int64_t(tile), C.int64_t(sym), C.uint64_t(mask), C.int64_t(isaCap),
		q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11])
	return fr.status()
}

// status reads the outcome and the counters of the last call from the C
// frame.
func (fr *frame) status() status {
	st := &fr.c.st
	return status{
		code: int64(st.code), a: int64(st.a), b: int64(st.b), c: int64(st.c), d: int64(st.d),
		isa: int64(st.isa),
		counters: Counters{
			Calls:               1,
			Invocations:         1,
			Tiles:               int64(st.tiles),
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

package native

/*
#include <stdlib.h>
#include "rx_runtime.h"

// rx_arena_new returns a zeroed arena (NULL when out of memory: calls then
// use arenas of their own).
static rx_arena *rx_arena_new(void) { return calloc(1, sizeof(rx_arena)); }
*/
import "C"

import (
	"runtime"
	"sync"
)

// frame is the Go side of one call: the rx_arg array, the status and the
// pinner (reused from call to call, so a call allocates none of them) and
// the arena lent to the call. A frame serves one call at a time.
type frame struct {
	args  []C.rx_arg
	st    C.rx_status
	pin   runtime.Pinner
	arena *C.rx_arena // C memory; nil if it could not be allocated
}

// framePool is a Program's pool of frames and their arenas. It is process
// memory of the Program, not a tensor cache: a call takes a frame, its
// arena holds the call's intermediates only while the call runs (every
// buffer is written by its op before anything reads it), and the frame
// goes back when the call ends. Arenas are freed by Close, or at once when
// the pool already holds max frames.
type framePool struct {
	mu   sync.Mutex
	free []*frame
	max  int
}

func newFramePool() *framePool {
	return &framePool{max: max(runtime.GOMAXPROCS(0), 2)}
}

// get returns a frame with room for n arguments.
func (p *framePool) get(n int) *frame {
	p.mu.Lock()
	var fr *frame
	if k := len(p.free); k > 0 {
		fr = p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
	}
	p.mu.Unlock()
	if fr == nil {
		fr = &frame{arena: C.rx_arena_new()}
	}
	if cap(fr.args) < n {
		fr.args = make([]C.rx_arg, n)
	}
	fr.args = fr.args[:n]
	return fr
}

// put returns a frame after its call.
func (p *framePool) put(fr *frame) {
	p.mu.Lock()
	if len(p.free) < p.max {
		p.free = append(p.free, fr)
		fr = nil
	}
	p.mu.Unlock()
	if fr != nil {
		C.rx_arena_free(fr.arena)
	}
}

// drain frees every pooled arena (Close; no call is running).
func (p *framePool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, fr := range p.free {
		C.rx_arena_free(fr.arena)
	}
	p.free = nil
}

package main

import (
	"math"
	"runtime/debug"

	"github.com/rextio/rxeq/harness"
)

// gcPercent is the collector's target that rxeq runs with (GOGC=400):
// rxeq's commands allocate at a high rate and keep little alive (a
// program's parse, lowering and tensors, dropped when the case ends), so
// Go's default of 100 spends a large share of the CPU collecting and
// returning pages to the kernel. Measured with `rxeq fuzz --count 128
// --executors oracle,fallback,onnxruntime,onnxruntime-noopt` on two cores,
// three runs each: 17.2–18.0 programs/s at 100, 19.8–21.4 at 400; the
// fuzz process's peak RSS 68 → 95 MB.
const gcPercent = 400

// tuneGC sets the collector of this process (rxeq's commands and the
// workers they start) to gcPercent, with a soft memory limit of twice the
// default memory budget (harness.DefaultMaxMemory, half of what the
// machine can give): near that limit the collector runs as often as it
// must, so the heap stays where GOGC=100 would have kept a case within
// the budget. A user's GOGC or GOMEMLIMIT wins (getenv is os.Getenv).
//
// It is called once at the edge (main), never from the commands
// themselves, which tests run in process.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		limit := int64(math.MaxInt64)
		if b := harness.DefaultMaxMemory(); b <= math.MaxInt64/2 {
			limit = 2 * b
		}
		debug.SetMemoryLimit(limit)
	}
}

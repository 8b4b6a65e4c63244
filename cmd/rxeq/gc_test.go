package main

import (
	"math"
	"runtime/debug"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
)

var _ = Describe("the collector's settings (tuneGC)", func() {
	// restore puts back what the test process ran with.
	restore := func() {
		percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
		DeferCleanup(func() {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
		})
	}
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}

	It("runs rxeq at GOGC=400 with a soft limit of twice the memory budget", func() {
		restore()
		tuneGC(env(nil))
		Expect(debug.SetGCPercent(100)).To(Equal(gcPercent))
		limit := debug.SetMemoryLimit(-1) // -1 reads it
		budget := harness.DefaultMaxMemory()
		Expect(limit).To(BeNumerically("~", 2*budget, budget/4), "MemAvailable moves a little between the two reads")
	})

	It("leaves the user's GOGC and GOMEMLIMIT alone", func() {
		restore()
		tuneGC(env(map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}))
		Expect(debug.SetGCPercent(100)).To(Equal(100), "unchanged")
		Expect(debug.SetMemoryLimit(-1)).To(Equal(int64(math.MaxInt64)), "unchanged")
		tuneGC(env(map[string]string{"GOGC": "off"}))
		Expect(debug.SetGCPercent(100)).To(Equal(100))
		Expect(debug.SetMemoryLimit(-1)).To(BeNumerically("<", int64(math.MaxInt64)))
	})
})

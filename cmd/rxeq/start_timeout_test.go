package main

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("rxeq run --start-timeout", Label("e2e"), func() {
	// silent is an external executor that never says hello.
	const silent = "silent=sleep 60"

	It("by default bounds a silent executor's hello by --timeout, so it cannot hold the run longer than a case may", func() {
		began := time.Now()
		code, out, _ := rxeq("run", "--timeout", "1s", "--batch", "1", "--executor", silent, "--backend", "oracle,silent", "../../scenarios/reference.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("did not start"))
		Expect(time.Since(began)).To(BeNumerically("<", 15*time.Second))
	})

	It("gives the start a bound of its own, longer than --timeout", func() {
		began := time.Now()
		code, out, _ := rxeq("run", "--timeout", "1s", "--start-timeout", "4s", "--batch", "1", "--executor", silent, "--backend", "oracle,silent", "../../scenarios/reference.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("did not start"))
		Expect(time.Since(began)).To(BeNumerically(">=", 4*time.Second))
	})

	It("rejects a negative start timeout", func() {
		code, _, errOut := rxeq("run", "--start-timeout", "-1s", "../../scenarios/reference.rx")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--start-timeout -1s: want a positive duration"))
	})
})

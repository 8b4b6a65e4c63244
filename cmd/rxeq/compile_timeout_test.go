package main

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("rxeq run --compile-timeout", Label("e2e"), func() {
	It("fails the native cases of a compiler that hangs, in time, and the run goes on", func() {
		dir := GinkgoT().TempDir()
		cc := filepath.Join(dir, "hang-cc")
		Expect(os.WriteFile(cc, []byte("#!/bin/sh\n[ \"$1\" = --version ] && { echo hang-cc 1.0; exit 0; }\nexec sleep 300\n"), 0o700)).To(Succeed())
		GinkgoT().Setenv("CC", cc)
		GinkgoT().Setenv("RXEQ_CACHE", filepath.Join(dir, "cache"))
		code, out, _ := rxeq("run", "--compile-timeout", "300ms", "--batch", "1", "--backend", "oracle,fallback,native", "../../scenarios/reference.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("compile timed out after 300ms"))
		Expect(out).To(MatchRegexp(`fallback\s+fallback\s+PASS`))
	})

	It("rejects a timeout that is not positive", func() {
		code, _, errOut := rxeq("run", "--compile-timeout", "0s", "../../scenarios/reference.rx")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--compile-timeout 0s: want a positive duration"))
	})
})

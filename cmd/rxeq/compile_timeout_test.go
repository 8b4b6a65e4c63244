package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("rxeq run --compile-timeout", Label("e2e"), func() {
	It("fails the native cases of a compiler that hangs, in time, and the run goes on", Label("native"), func() {
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

// asRxeq makes the test binary act as the rxeq command with its signal
// handling (see TestMain).
const asRxeq = "as-rxeq"

var _ = Describe("rxeq run under SIGTERM", Label("e2e", "native"), func() {
	It("kills the compiler it is waiting for and exits", func() {
		dir := GinkgoT().TempDir()
		pidFile := filepath.Join(dir, "cc.pid")
		cc := filepath.Join(dir, "hang-cc")
		Expect(os.WriteFile(cc, []byte("#!/bin/sh\n[ \"$1\" = --version ] && { echo hang-cc 1.0; exit 0; }\necho $$ > "+pidFile+"\nexec sleep 300\n"), 0o700)).To(Succeed())
		exe, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(exe, asRxeq, "run", "--batch", "1", "../../scenarios/reference.rx")
		cmd.Env = append(os.Environ(), "CC="+cc, "RXEQ_CACHE="+filepath.Join(dir, "cache"))
		Expect(cmd.Start()).To(Succeed())
		var pid int
		Eventually(func() error {
			b, err := os.ReadFile(pidFile)
			if err == nil {
				pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return err
		}).WithTimeout(30 * time.Second).Should(Succeed())
		DeferCleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		Eventually(done).WithTimeout(20 * time.Second).Should(Receive())
		Eventually(func() bool {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			return err == nil && strings.Fields(string(stat))[2] != "Z"
		}).WithTimeout(10*time.Second).Should(BeFalse(), "the compiler (pid %d) outlived rxeq", pid)
	})
})

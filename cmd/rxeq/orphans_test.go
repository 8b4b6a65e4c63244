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

// escapeeScript starts `sleep 300` in a session of its own with an empty
// environment (so nothing marks it as the executor's), from a subshell
// that exits at once (so it leaves the executor's tree), which writes its
// pid to $1 once it has escaped, waits for that, and then does what $2
// says: "exit" (fail the hello) or "hang" (never say hello).
const escapeeScript = `(env -i setsid sh -c 'printf %s $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec sleep 300' "$1" </dev/null >/dev/null 2>&1 &)
while [ ! -s "$1" ]; do sleep 0.01; done
[ "$2" = hang ] && exec sleep 300
exit 0`

var _ = Describe("what an executor leaves behind when rxeq exits", Label("e2e"), func() {
	// runEscapee runs the as-rxeq binary with an executor that starts an
	// escapee, and returns the command and the escapee's pid.
	runEscapee := func(then string) (*exec.Cmd, int) {
		dir := GinkgoT().TempDir()
		pidFile := filepath.Join(dir, "pid")
		script := filepath.Join(dir, "escape.sh")
		Expect(os.WriteFile(script, []byte(escapeeScript), 0o700)).To(Succeed())
		exe, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(exe, asRxeq, "run", "--backend", "oracle,esc", "--timeout", "60s",
			"--executor", "esc=/bin/sh "+script+" "+pidFile+" "+then, "../../scenarios/reference.rx")
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
		return cmd, pid
	}
	running := func(pid int) func() bool {
		return func() bool {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			return err == nil && strings.Fields(string(stat))[2] != "Z"
		}
	}

	It("kills a process that left the executor's session and environment when rxeq fails", func() {
		cmd, pid := runEscapee("exit")
		err := cmd.Wait()
		var exit *exec.ExitError
		Expect(err).To(BeAssignableToTypeOf(exit), "rxeq should fail: the executor never says hello")
		Eventually(running(pid)).WithTimeout(10*time.Second).Should(BeFalse(), "the escapee (pid %d) outlived rxeq", pid)
	})

	It("kills it when rxeq is stopped with SIGTERM", func() {
		cmd, pid := runEscapee("hang")
		Expect(running(pid)()).To(BeTrue())
		Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		Eventually(done).WithTimeout(20 * time.Second).Should(Receive())
		Eventually(running(pid)).WithTimeout(10*time.Second).Should(BeFalse(), "the escapee (pid %d) outlived rxeq", pid)
	})
})

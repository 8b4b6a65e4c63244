package subproc

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

// The race the guard's watcher closes: when rxeq dies, the kernel closes
// its files (the command's stdin) before it sends the parent-death
// signal, so a command that exits on EOF can take the guard shell with it
// before the signal comes, and the shell then runs no trap. The spec
// plays that order without a parent-death signal at all: the command's
// stdin closes, then rxeq's end of the guard's pipe.
var _ = Describe("a guard whose command exits when rxeq's pipes close", func() {
	run := func(argv func([]string) []string, watch bool) (sleeper int) {
		GinkgoHelper()
		pidFile := filepath.Join(GinkgoT().TempDir(), "pid")
		script := `sleep 300 & echo $! >"$0"; read -r _ || :`
		a := argv([]string{"/bin/sh", "-c", script, pidFile})
		cmd := exec.Command(a[0], a[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdin, err := cmd.StdinPipe()
		Expect(err).NotTo(HaveOccurred())
		lifeR, lifeW, err := os.Pipe()
		Expect(err).NotTo(HaveOccurred())
		if watch {
			cmd.ExtraFiles = []*os.File{lifeR}
		}
		Expect(cmd.Start()).To(Succeed())
		lifeR.Close()
		DeferCleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		Eventually(func() error {
			b, err := os.ReadFile(pidFile)
			if err == nil && strings.HasSuffix(string(b), "\n") {
				sleeper, err = strconv.Atoi(strings.TrimSpace(string(b)))
			} else if err == nil {
				err = os.ErrNotExist
			}
			return err
		}, 5*time.Second).Should(Succeed())
		DeferCleanup(func() { _ = syscall.Kill(sleeper, syscall.SIGKILL) })
		// rxeq dies: its files close, stdin first.
		Expect(stdin.Close()).To(Succeed())
		Expect(cmd.Wait()).To(Succeed()) // the guard exits normally: no trap ran
		lifeW.Close()
		return sleeper
	}
	alive := func(pid int) bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		i := strings.LastIndexByte(string(b), ')')
		return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
	}

	It("leaves nothing behind with the watcher", func() {
		pid := run(guardWatch, true)
		Eventually(func() bool { return alive(pid) }, 10*time.Second).Should(BeFalse(), "sleep %d outlived the guard", pid)
	})

	It("left the command's children behind without it (so the spec above can fail)", func() {
		pid := run(Guard, false)
		Consistently(func() bool { return alive(pid) }, 500*time.Millisecond).Should(BeTrue())
	})
})

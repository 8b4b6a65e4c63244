//go:build linux

package subproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// reapChildEnv makes TestReapOrphanChild run (in a child of the spec
// below, since it makes its process a subreaper).
const reapChildEnv = "RXEQ_SUBPROC_REAP_CHILD"

// TestReapOrphanChild plays, in a subreaper as rxeq is, what an escaped
// sleeper does when its executor dies: the sleeper S is dead and a zombie
// of its parent P, and reap is given both. P is reaped, S is re-parented
// here, and reap must reap it too rather than count a zombie as gone. It
// prints the number of zombies left over 10 rounds.
func TestReapOrphanChild(t *testing.T) {
	if os.Getenv(reapChildEnv) == "" {
		t.Skip("the child of the reap spec")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	left := 0
	for range 10 {
		// P starts S, then becomes a sleep, which never reaps S.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "sleep 300 & echo $!; exec sleep 300"},
			&os.ProcAttr{Files: []*os.File{nil, w, os.Stderr}})
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(r).ReadString('\n')
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		s, _ := strconv.Atoi(strings.TrimSpace(line))
		t.Cleanup(func() { _ = syscall.Kill(s, syscall.SIGKILL); _ = p.Kill() })
		// Kill S only once P is the sleep, which never reaps it (the
		// shell before it would).
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.Pid)); strings.TrimSpace(string(comm)) == "sleep" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d never became a sleep", p.Pid)
			}
		}
		_ = syscall.Kill(s, syscall.SIGKILL)
		var sInfo procInfo
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			info, ok := readProc(s)
			if ok && info.state == 'Z' && info.ppid == p.Pid {
				sInfo = info
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sleeper %d never became a zombie of %d", s, p.Pid)
			}
		}
		pInfo, _ := readProc(p.Pid)
		reap(killAll([]procInfo{sInfo, pInfo}))
		if now, ok := readProc(s); ok && now.start == sInfo.start {
			left++
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(s, &ws, 0, nil)
		}
		if now, ok := readProc(p.Pid); ok && now.start == pInfo.start {
			_, _ = p.Wait()
		}
	}
	fmt.Printf("zombies left: %d\n", left)
}

var _ = Describe("reap in a subreaper", func() {
	It("reaps a killed process that is re-parented here after its parent is reaped, rather than leave it a zombie", func() {
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(self, "-test.run", "^TestReapOrphanChild$", "-test.v")
		cmd.Env = append(os.Environ(), reapChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("zombies left: 0\n"))
	})
})

package subproc_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/subproc"
)

func TestSubproc(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "subproc")
}

// childEnv makes the test binary a child process of the specs, in the
// mode its value names (see child).
const childEnv = "RXEQ_SUBPROC_TEST_CHILD"

// TestMain runs the test binary as a child when $RXEQ_SUBPROC_TEST_CHILD
// is set.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child serves lines on stdin, one answer line per line read, breaking
// as mode says:
//
//	echo        answer "ok LINE"; exit 0 at the end of stdin
//	exit3       say "dying on purpose" on stderr and exit 3
//	gofatal     print the Go runtime's report of a SIGSEGV in C code, a
//	            goroutine dump, and exit 2, as a Go worker does
//	hang        never answer
//	garbage     answer with a line that is not "ok …"
//	closeout    close stdout and stay alive
//	grandchild  start a grandchild (this binary in hang mode), answer
//	            "ok PID" with its pid, then never answer again
//	forkexit    start a grandchild, answer "ok PID", then exit 3
//	answerexit  answer "ok LINE", then exit 0 (between messages)
//	guarded     start sh -c 'sleep 300 & echo $!; wait' under
//	            subproc.Guard, copy its line ("PID") to stdout, and hang
func child(mode string) int {
	if mode == "guarded" {
		argv := subproc.Guard([]string{"/bin/sh", "-c", "sleep 300 & echo $!; wait"})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = subproc.GuardProcAttr()
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			fmt.Printf("error %v\n", err)
		}
		select {}
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch mode {
		case "echo":
			fmt.Printf("ok %s\n", in.Text())
		case "exit3":
			fmt.Fprintln(os.Stderr, "dying on purpose")
			return 3
		case "gofatal":
			fmt.Fprint(os.Stderr, "kernel says hi\nSIGSEGV: segmentation violation\nPC=0x7f00 m=0 sigcode=1 addr=0x0\nsignal arrived during cgo execution\n\ngoroutine 1 gp=0x1 m=0 mp=0x2 [syscall]:\nruntime.cgocall(...)\n")
			return 2
		case "hang":
			select {}
		case "garbage":
			fmt.Println("debug: x=1")
		case "closeout":
			os.Stdout.Close()
			select {}
		case "answerexit":
			fmt.Printf("ok %s\n", in.Text())
			return 0
		case "grandchild", "forkexit":
			self, _ := os.Executable()
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), childEnv+"=hang")
			cmd.Stdin, _ = os.Open(os.DevNull) // its stdin never ends
			if err := cmd.Start(); err != nil {
				fmt.Printf("error %v\n", err)
				continue
			}
			fmt.Printf("ok %d\n", cmd.Process.Pid)
			if mode == "forkexit" {
				return 3
			}
			mode = "hang"
		}
	}
	if mode == "hang" {
		select {}
	}
	return 0
}

// gone reports whether process pid has exited (and is not a zombie
// waiting for its new parent to reap it).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// "PID (COMM) STATE …": the state follows the last ')'.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
		}
	}
	return false
}

// eventually is how long a process may take to go.
const eventually = 5 * time.Second

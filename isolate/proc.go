package isolate

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rextio/rxeq/internal/signame"
)

// worker is one running worker process and its pipes.
type worker struct {
	cmd    *exec.Cmd
	stdin  *os.File // parent's write end
	stdout *os.File // parent's read end
	bw     *bufio.Writer
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr *tail
	done   chan struct{} // closed once the process is reaped
	state  *os.ProcessState
	killed sync.Once
}

// startWorker starts argv with env added to the environment and reads its
// hello within helloTimeout (or until ctx is done).
func startWorker(ctx context.Context, argv, env []string, helloTimeout time.Duration) (*worker, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: no worker command", ErrWorker)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWorker, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("%w: %v", ErrWorker, err)
	}
	w := &worker{stdin: inW, stdout: outR, stderr: &tail{max: 4096}, done: make(chan struct{})}
	w.cmd = exec.Command(argv[0], argv[1:]...)
	w.cmd.Env = os.Environ()
	if os.Getenv("GOTRACEBACK") == "" {
		// A crash report's tail shows the signal and the C frame, not a
		// dump of every goroutine.
		w.cmd.Env = append(w.cmd.Env, "GOTRACEBACK=none")
	}
	w.cmd.Env = append(w.cmd.Env, env...)
	w.cmd.Stdin, w.cmd.Stdout, w.cmd.Stderr = inR, outW, w.stderr
	w.cmd.SysProcAttr = sysProcAttr()
	w.cmd.WaitDelay = 2 * time.Second // stderr held open by a stray grandchild
	err = w.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%w: starting %s: %v", ErrWorker, argv[0], err)
	}
	go func() {
		_ = w.cmd.Wait()
		w.state = w.cmd.ProcessState
		close(w.done)
	}()
	w.bw = bufio.NewWriter(inW)
	w.enc = gob.NewEncoder(w.bw)
	w.dec = gob.NewDecoder(bufio.NewReader(outR))

	var h hello
	err = w.exchange(ctx, helloTimeout, nil, &h)
	if err == nil && h.Protocol != protocolVersion {
		err = fmt.Errorf("%w: %s speaks %q, want %q (is it an rxeq binary of this version?)", ErrWorker, argv[0], h.Protocol, protocolVersion)
	}
	if err != nil {
		w.kill()
		if errors.Is(err, ErrCrashed) || errors.Is(err, ErrTimedOut) {
			err = fmt.Errorf("%w: %s did not start: %v", ErrWorker, strings.Join(argv, " "), err)
		}
		return nil, err
	}
	return w, nil
}

// exchange sends req (unless nil) and decodes one message into resp,
// bounded by ctx and by timeout (when positive). On any failure the worker
// is killed and reaped, and the error says why: ErrTimedOut, ErrCrashed
// (the process died), ctx.Err(), or ErrWorker (it answered garbage).
func (w *worker) exchange(ctx context.Context, timeout time.Duration, req, resp any) error {
	errc := make(chan error, 1)
	go func() {
		if req != nil {
			if err := w.enc.Encode(req); err != nil {
				errc <- err
				return
			}
			if err := w.bw.Flush(); err != nil {
				errc <- err
				return
			}
		}
		errc <- w.dec.Decode(resp)
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case err := <-errc:
		if err == nil {
			return nil
		}
		return w.failure(err)
	case <-ctx.Done():
		w.kill()
		<-errc
		return fmt.Errorf("native worker killed: %w", ctx.Err())
	case <-timer:
		w.kill()
		<-errc
		return fmt.Errorf("%w after %s", ErrTimedOut, timeout)
	}
}

// failure explains a broken pipe or an undecodable message: if the
// process exited (or exits within a moment), how it ended; otherwise it is
// killed and the message was garbage.
func (w *worker) failure(ioErr error) error {
	select {
	case <-w.done:
	case <-time.After(2 * time.Second):
		w.kill()
		return fmt.Errorf("%w: bad message from the worker: %v%s", ErrWorker, ioErr, w.stderr.report())
	}
	w.kill() // close our pipe ends
	return fmt.Errorf("%w: %s%s", ErrCrashed, describeExit(w.state, w.stderr.fatalSignal()), w.stderr.report())
}

// kill kills the worker's process group, closes the parent's pipe ends
// (unblocking any reader) and waits until the process is reaped.
func (w *worker) kill() {
	w.killed.Do(func() {
		select {
		case <-w.done: // reaped: its pid (and group id) may be reused
		default:
			p := w.cmd.Process
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
			_ = p.Kill()
		}
		w.stdin.Close()
		w.stdout.Close()
	})
	<-w.done
}

// stop ends the worker cleanly: closing stdin makes Serve return; a worker
// that has not exited after grace is killed.
func (w *worker) stop(grace time.Duration) {
	w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(grace):
	}
	w.kill()
}

// describeExit says how a process ended: "signal SIGSEGV" or "exit status
// 3". reported is the fatal signal the Go runtime printed, if any: a Go
// process that dies of a signal in C code exits with status 2 after
// printing it, and that signal is what the process died of.
func describeExit(st *os.ProcessState, reported string) string {
	if st == nil {
		return "worker exited"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + signame.Name(ws.Signal())
	}
	if reported != "" && st.ExitCode() == 2 {
		return "signal " + reported
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// tail keeps the last max bytes written to it, and the name of the last
// fatal signal the Go runtime reported ("SIGSEGV: segmentation violation"
// at the start of a line: the worker is a Go program, whose runtime turns a
// signal in C code into that report and exit status 2). When it sees that
// report it also keeps a snapshot: the output before it and the report's
// first lines, without the goroutine dump that follows.
type tail struct {
	mu       sync.Mutex
	max      int
	buf      []byte
	line     []byte // the current incomplete line (its first 64 bytes)
	signal   string
	snapshot []byte
	more     int // report lines still to add to the snapshot
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range p {
		t.buf = append(t.buf, c)
		if t.more > 0 {
			t.snapshot = append(t.snapshot, c)
		}
		if c != '\n' {
			if len(t.line) < 64 {
				t.line = append(t.line, c)
			}
			continue
		}
		if t.more > 0 {
			t.more--
		}
		if m := fatalSignalLine.FindSubmatch(t.line); m != nil && t.snapshot == nil {
			t.signal = string(m[1])
			t.snapshot = append([]byte(nil), t.buf...)
			t.more = 2 // "PC=…" and "signal arrived during cgo execution"
		}
		t.line = t.line[:0]
	}
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// fatalSignalLine is the first line of the Go runtime's report of a fatal
// signal.
var fatalSignalLine = regexp.MustCompile(`^(SIG[A-Z0-9]+): `)

// fatalSignal returns the signal the Go runtime reported, or "".
func (t *tail) fatalSignal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.signal
}

// report returns the tail as "\nworker stderr (tail):\n…", or "" when empty.
func (t *tail) report() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.snapshot != nil {
		b = t.snapshot
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return "\nworker stderr (tail):\n" + s
}

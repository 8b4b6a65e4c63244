package external

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rextio/rxeq/internal/signame"
)

// extProc is one running external executor process and its pipes. It is
// used by one call at a time (Executor's semaphore).
type extProc struct {
	name   string // the executor's name in rxeq, for messages
	cmd    *exec.Cmd
	stdin  *os.File // the parent's write end
	stdout *os.File // the parent's read end
	bw     *bufio.Writer
	br     *bufio.Reader
	stderr *stderrTail
	done   chan struct{} // closed once the process is reaped
	state  *os.ProcessState
	killed sync.Once

	hello    *inMsg
	nextID   uint64
	prepared map[int]map[string]string // program id -> its unserved functions
	maxPay   int64
}

// startExtProc starts argv and reads its hello within timeout.
func startExtProc(ctx context.Context, name string, argv, env []string, dir string, timeout time.Duration, maxPayload int64) (*extProc, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: %s: no command", ErrStart, name)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrStart, name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrStart, name, err)
	}
	growPipe(inW)
	growPipe(outR)
	p := &extProc{name: name, stdin: inW, stdout: outR, stderr: &stderrTail{max: 4096}, done: make(chan struct{}),
		prepared: map[int]map[string]string{}, maxPay: maxPayload}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Dir = dir
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.stderr
	p.cmd.SysProcAttr = externalSysProcAttr()
	p.cmd.WaitDelay = 2 * time.Second // stderr held open by a stray grandchild
	err = p.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrStart, name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.done)
	}()
	p.bw = bufio.NewWriterSize(inW, 1<<16)
	p.br = bufio.NewReaderSize(outR, 1<<16)
	m, err := p.exchange(ctx, timeout, "its hello", nil)
	if err == nil && m.Type != msgHello {
		err = fmt.Errorf("%w: %s: the first message is %q, want %q", ErrProtocol, name, m.Type, msgHello)
	}
	if err == nil && m.Protocol != Protocol {
		err = fmt.Errorf("%w: %s speaks %q, want %q", ErrProtocol, name, m.Protocol, Protocol)
	}
	if err == nil && len(m.FunctionsRaw) > 0 && string(m.FunctionsRaw) != "null" {
		if jerr := json.Unmarshal(m.FunctionsRaw, &m.Functions); jerr != nil {
			err = fmt.Errorf("%w: %s: the hello's functions are not a list of names: %s", ErrProtocol, name, m.FunctionsRaw)
		} else if m.Functions == nil {
			m.Functions = []string{}
		}
	}
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("%w: %s (%s): %w", ErrStart, name, strings.Join(argv, " "), err)
	}
	p.hello = m
	return p, nil
}

// exchange sends one request (unless send is nil) and reads one message,
// bounded by ctx and by timeout (when positive). what names the awaited
// answer for messages ("the result of score_linear"). On any failure the
// process is killed and reaped, and the error says why: ErrTimedOut,
// ErrCrashed (it exited), ctx.Err(), or ErrProtocol (it answered
// garbage or closed its stdout).
func (p *extProc) exchange(ctx context.Context, timeout time.Duration, what string, send func(*bufio.Writer) error) (*inMsg, error) {
	type reply struct {
		m   *inMsg
		err error
	}
	ch := make(chan reply, 1)
	go func() {
		if send != nil {
			if err := send(p.bw); err != nil {
				ch <- reply{err: err}
				return
			}
		}
		m, err := readFrame(p.br, p.maxPay)
		ch <- reply{m, err}
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case r := <-ch:
		if r.err == nil {
			return r.m, nil
		}
		return nil, p.failure(what, r.err)
	case <-ctx.Done():
		p.kill()
		<-ch
		return nil, fmt.Errorf("%s killed while waiting for %s: %w", p.name, what, ctx.Err())
	case <-timer:
		p.kill()
		<-ch
		return nil, fmt.Errorf("%w: %s gave no answer within %s while waiting for %s (killed)%s", ErrTimedOut, p.name, timeout, what, p.stderr.report())
	}
}

// failure explains a failed read or write: a malformed message, or a
// closed pipe, which is a crash when the process has exited (or exits
// within a moment) and a protocol violation otherwise.
func (p *extProc) failure(what string, err error) error {
	if isProtocolError(err) {
		p.kill()
		return fmt.Errorf("%w: %s, while waiting for %s: %v%s", ErrProtocol, p.name, what, err, p.stderr.report())
	}
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		p.kill()
		return fmt.Errorf("%w: %s closed its stdout or sent a cut message while waiting for %s (%v)%s", ErrProtocol, p.name, what, err, p.stderr.report())
	}
	p.kill()
	return fmt.Errorf("%w: %s, while waiting for %s: %s%s", ErrCrashed, p.name, what, describeExternalExit(p.state), p.stderr.report())
}

// kill kills the process group, closes the parent's pipe ends (unblocking
// any reader or writer) and waits until the process is reaped.
func (p *extProc) kill() {
	p.killed.Do(func() {
		select {
		case <-p.done: // reaped: its pid (and group id) may be reused
		default:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			_ = p.cmd.Process.Kill()
		}
		p.stdin.Close()
		p.stdout.Close()
	})
	<-p.done
}

// stop ends the process cleanly: a close message and the end of its
// stdin; one that has not exited after grace is killed.
func (p *extProc) stop(grace time.Duration) {
	go func() {
		_ = writeFrame(p.bw, closeMsg{Type: msgClose})
		p.stdin.Close()
	}()
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	p.kill()
}

// alive reports whether the process has not exited.
func (p *extProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// describeExternalExit says how a process ended: "signal SIGSEGV",
// "exit status 3".
func describeExternalExit(st *os.ProcessState) string {
	if st == nil {
		return "it exited"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + signame.Name(ws.Signal())
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// stderrTail keeps the last max bytes an executor wrote to its stderr,
// for crash reports.
type stderrTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *stderrTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// report returns "\nexecutor stderr (tail):\n…", or "" when it is empty.
func (t *stderrTail) report() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	return "\nexecutor stderr (tail):\n" + s
}

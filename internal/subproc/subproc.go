// Package subproc supervises the child processes that rxeq's executors run
// code in: the native and torch workers (package isolate) and external
// executors (package external).
//
// Start runs a command in a process group of its own, on pipes (1 MiB
// buffers on Linux), killed with its parent on Linux. Exchange sends one
// message and reads one answer, bounded by a context and a timeout, with
// the caller's codec (a send and a receive func over Stdin and Stdout);
// when the process crashes, hangs or answers garbage it is killed (its
// whole group) and the call fails with an *executor.ProcessError whose
// text names the executor. Stop ends a process cleanly, with a grace
// period before the kill. A Gate serialises the calls to one process and
// says, for a call whose deadline came while it waited, which call held
// the process (executor.ErrNotRun).
package subproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/signame"
)

// Config describes a process to start and how its failures read.
type Config struct {
	// Argv is the command line (no shell is involved).
	Argv []string
	// Env is added to this process's environment.
	Env []string
	// Dir is the working directory ("" for this process's).
	Dir string
	// GoChild says the child is a Go program (an rxeq worker): its
	// environment gets GOTRACEBACK=none unless this process has one set,
	// so a crash report shows the signal, not every goroutine, and the
	// signal its runtime reports ("SIGSEGV: segmentation violation", then
	// exit status 2) is taken as what it died of.
	GoChild bool
	// Guard runs the command under a Guard shell (its process group's
	// leader), so that what the command starts dies with it even when
	// rxeq is killed with SIGKILL (on Linux). The command's death by
	// signal N then reads as the guard's exit status 128 + N, and is
	// reported as that signal.
	Guard bool
	// Executor names the executor whose code the process runs, in error
	// texts.
	Executor executor.Name
	// External says the process is an external executor (see
	// executor.ProcessError for how its errors read).
	External bool
	// Crashed, TimedOut and Protocol are the kinds of the process's
	// failures: executor.ErrCrashed, executor.ErrTimedOut and
	// executor.ErrProtocol when nil, else an engine's error wrapping that.
	Crashed, TimedOut, Protocol error
}

// Process is one running child process and the parent's ends of its
// pipes. Exchange is for one caller at a time (see Gate); Kill, Stop and
// Alive may be called from anywhere.
type Process struct {
	cfg    Config
	cmd    *exec.Cmd
	stdin  *os.File   // the parent's write end
	stdout *os.File   // the parent's read end
	in     pipeWriter // stdin, as Stdin gives it
	out    pipeReader // stdout, as Stdout gives it
	inRaw  syscall.RawConn
	outRaw syscall.RawConn
	stderr *Tail
	done   chan struct{} // closed once the process is reaped
	state  *os.ProcessState
	killed sync.Once
	token  string // TokenEnv=VALUE, in the environment of the process and of what it starts
}

// TokenEnv is the environment variable that marks the processes started
// on behalf of one Process: its value is random and different for each
// Process, and what inherits it (everything the process starts, unless
// it clears its environment) is killed with the process, even when it
// has left the process group (setsid) and been re-parented.
const TokenEnv = "RXEQ_SUPERVISED"

// exitWait is how long a failed read or write waits for the process to
// exit before it is taken for a protocol violation.
const exitWait = 2 * time.Second

// Start starts the process described by cfg. Its error is the system's
// (no such file, too many processes); the caller says what failed to
// start.
func Start(cfg Config) (*Process, error) {
	if len(cfg.Argv) == 0 {
		return nil, errors.New("no command")
	}
	if cfg.Crashed == nil {
		cfg.Crashed = executor.ErrCrashed
	}
	if cfg.TimedOut == nil {
		cfg.TimedOut = executor.ErrTimedOut
	}
	if cfg.Protocol == nil {
		cfg.Protocol = executor.ErrProtocol
	}
	argv := cfg.Argv
	if cfg.Guard {
		// Found as exec.Command finds it (this process's PATH), so that
		// a missing command is Start's error, as without the guard.
		path := argv[0]
		if !strings.Contains(path, "/") {
			var err error
			if path, err = exec.LookPath(path); err != nil {
				return nil, err
			}
		} else {
			at := path
			if !filepath.IsAbs(at) && cfg.Dir != "" {
				at = filepath.Join(cfg.Dir, at)
			}
			if _, err := exec.LookPath(at); err != nil {
				return nil, err
			}
		}
		argv = guardWatch(append([]string{path}, argv[1:]...))
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	growPipe(inW)
	growPipe(outR)
	p := &Process{cfg: cfg, stdin: inW, stdout: outR, stderr: NewTail(4096, cfg.GoChild), done: make(chan struct{})}
	p.in.f, p.out.f = inW, outR
	p.inRaw, _ = inW.SyscallConn() // never fails for an *os.File
	p.outRaw, _ = outR.SyscallConn()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = os.Environ()
	if cfg.GoChild && os.Getenv("GOTRACEBACK") == "" {
		p.cmd.Env = append(p.cmd.Env, "GOTRACEBACK=none")
	}
	p.cmd.Env = append(p.cmd.Env, cfg.Env...)
	p.token = TokenEnv + "=" + newToken()
	p.cmd.Env = append(p.cmd.Env, p.token) // last: it wins over an inherited one
	p.cmd.Dir = cfg.Dir
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.stderr
	p.cmd.SysProcAttr = sysProcAttr()
	var lifeR, lifeW *os.File // the guard's pipe (watchScript): EOF when rxeq dies
	if cfg.Guard {
		p.cmd.SysProcAttr = GuardProcAttr()
		if lifeR, lifeW, err = os.Pipe(); err != nil {
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
		p.cmd.ExtraFiles = []*os.File{lifeR} // fd 3
	}
	p.cmd.WaitDelay = 2 * time.Second // stderr held open by a stray grandchild
	err = p.cmd.Start()
	inR.Close()
	outW.Close()
	if lifeR != nil {
		lifeR.Close()
	}
	if err != nil {
		inW.Close()
		outR.Close()
		if lifeW != nil {
			lifeW.Close()
		}
		return nil, err
	}
	go func() {
		// The moment the leader exits, before it is reaped, its group is
		// killed: whatever it started (and left running when it crashed,
		// or started while it handled its last message) goes with it.
		// So is every process started on its behalf that left the group.
		if waitExited(p.cmd.Process.Pid) {
			_ = killGroup(p.cmd.Process.Pid)
			reap(killAll(leftBehind(p.cmd.Process.Pid, p.token))) // its zombie keeps its pid
		}
		_ = p.cmd.Wait()
		if lifeW != nil {
			// The group is gone: the guard's reader needs no more
			// telling. Kept open until here (rxeq's exit closes it).
			lifeW.Close()
		}
		p.state = p.cmd.ProcessState
		close(p.done)
	}()
	return p, nil
}

// newToken returns 128 random bits in hex.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Stdin is the process's stdin, for the send funcs of Exchange.
func (p *Process) Stdin() io.Writer { return &p.in }

// Stdout is the process's stdout, for the receive funcs of Exchange.
func (p *Process) Stdout() io.Reader { return &p.out }

// Pid is the process's id (and its group's).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the process has not exited.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Exchange runs send (unless nil) and then receive, which write one
// message to Stdin and read one from Stdout with the caller's codec,
// bounded by ctx and by timeout (when positive). while says what rxeq
// waits for ("the result of score_linear"; "" when the engine's texts do
// not say). On any failure the process group is killed and the process
// reaped, and the error says why:
//
//   - an *executor.ProcessError whose Kind is Config.TimedOut, when the
//     timeout came first;
//   - one whose Kind is Config.Crashed, when the process exited (a failed
//     read or write, then the process's exit within a moment);
//   - one whose Kind is Config.Protocol, when send or receive returned an
//     error wrapping executor.ErrProtocol (the codec saw garbage), or the
//     process did not exit after a failed read or write;
//   - "NAME killed [while waiting for WHILE]: " and ctx.Err(), wrapped,
//     when ctx ended first.
//
// send and receive run on the calling goroutine: the timeout is a read
// and a write deadline on the pipes (Go's poller ends a blocked read or
// write when it passes, without a goroutine or a timer of Exchange's),
// and the end of ctx kills the process (context.AfterFunc), which closes
// the pipes under a blocked read or write. A call costs no goroutine, no
// channel and no timer of its own.
func (p *Process) Exchange(ctx context.Context, timeout time.Duration, while string, send, receive func() error) error {
	if ctx.Err() != nil {
		p.Kill()
		return fmt.Errorf("%s killed%s: %w", p.who(), waiting(while), ctx.Err())
	}
	p.in.expired, p.out.expired = false, false
	if timeout > 0 {
		deadline := time.Now().Add(timeout)
		_ = p.stdin.SetWriteDeadline(deadline)
		_ = p.stdout.SetReadDeadline(deadline)
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, p.Kill)
	}
	var err error
	if send != nil {
		err = send()
	}
	if err == nil {
		err = receive()
	}
	if stop != nil && !stop() {
		// ctx ended: its Kill has run or runs now; wait for it.
		p.Kill()
		return fmt.Errorf("%s killed%s: %w", p.who(), waiting(while), ctx.Err())
	}
	if timeout > 0 {
		// No deadline outside an exchange (a release message, the
		// close); on closed pipes these fail, which changes nothing.
		_ = p.stdin.SetWriteDeadline(time.Time{})
		_ = p.stdout.SetReadDeadline(time.Time{})
	}
	if err == nil {
		return nil
	}
	if p.in.expired || p.out.expired {
		// The deadline passed under a read or a write, whatever the
		// codec made of the error.
		p.Kill()
		return p.processError(p.cfg.TimedOut, while, func(e *executor.ProcessError) { e.Timeout = timeout })
	}
	return p.failure(while, err, send != nil)
}

// pipeReader is the parent's end of the process's stdout as Exchange's
// receive funcs read it: it notes a read that the deadline ended, and
// whether the last read left the pipe empty.
type pipeReader struct {
	f       *os.File
	expired bool // a read ended at the deadline
	short   bool // the last read returned fewer bytes than asked for
}

func (r *pipeReader) Read(b []byte) (int, error) {
	n, err := r.f.Read(b)
	r.short = err == nil && n < len(b)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		r.expired = true
	}
	return n, err
}

// pipeWriter is the parent's end of the process's stdin as Exchange's
// send funcs write it: it notes a write that the deadline ended.
type pipeWriter struct {
	f       *os.File
	expired bool
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		w.expired = true
	}
	return n, err
}

// who names the process in texts: "native worker", or an external
// executor's name.
func (p *Process) who() string {
	if p.cfg.External {
		return string(p.cfg.Executor)
	}
	return string(p.cfg.Executor) + " worker"
}

// waiting returns " while waiting for WHILE", or "".
func waiting(while string) string {
	if while == "" {
		return ""
	}
	return " while waiting for " + while
}

// failure explains a failed send or receive: garbage the codec saw is a
// protocol violation; a closed pipe is a crash when the process has
// exited (or exits within a moment) and a protocol violation otherwise.
// sent says a request was sent: when the process exited without reading
// it (the write found the pipe closed, or bytes of it are still in the
// pipe), the crash error also wraps ErrUndelivered.
func (p *Process) failure(while string, ioErr error, sent bool) error {
	if !errors.Is(ioErr, executor.ErrProtocol) {
		select {
		case <-p.done:
			undelivered := sent && (errors.Is(ioErr, syscall.EPIPE) || unread(p.inRaw) > 0)
			p.Kill() // close our pipe ends
			err := p.processError(p.cfg.Crashed, while, p.exit)
			if undelivered {
				return &undeliveredError{err}
			}
			return err
		case <-time.After(exitWait):
		}
	}
	p.Kill()
	return p.processError(p.cfg.Protocol, while, func(e *executor.ProcessError) {
		e.Detail = ioErr.Error()
		if errors.Is(ioErr, io.EOF) || errors.Is(ioErr, io.ErrUnexpectedEOF) || errors.Is(ioErr, syscall.EPIPE) {
			e.Detail = "it closed its stdout or sent a cut message (" + ioErr.Error() + ")"
		}
	})
}

// ErrUndelivered: the process exited before it read the request of an
// Exchange, so the request played no part in its end. The error of such
// an Exchange wraps it beside the crash; a caller may start a new process
// and send the request again.
var ErrUndelivered = errors.New("the process exited before it read the request")

// undeliveredError is a crash error that also wraps ErrUndelivered; its
// text is the crash's.
type undeliveredError struct{ error }

func (e *undeliveredError) Unwrap() []error { return []error{e.error, ErrUndelivered} }

// Pending returns how many bytes the process has written to its stdout
// that the parent has not read yet (as far as the system can tell: 0
// outside Linux). Bytes buffered by the caller's reader are not counted.
// It costs a system call.
func (p *Process) Pending() int { return unread(p.outRaw) }

// Drained reports whether the last read from Stdout returned fewer bytes
// than it asked for: the pipe was empty then, so every byte the process
// had written by that read is in the caller's hands (its reader's
// buffer). A caller that checks for bytes after a message can skip
// Pending when its last read was short: bytes written later came after
// the message as much as after a Pending call would have.
func (p *Process) Drained() bool { return p.out.short }

// processError returns a ProcessError of kind, filled in by set.
func (p *Process) processError(kind error, while string, set func(*executor.ProcessError)) error {
	e := &executor.ProcessError{Executor: p.cfg.Executor, Kind: kind, External: p.cfg.External, While: while, Stderr: p.stderr.Report()}
	set(e)
	return e
}

// exit fills in how the reaped process ended: the signal it died of
// (also one the Go runtime of a Go child reported before it exited with
// status 2), else its exit status.
func (p *Process) exit(e *executor.ProcessError) {
	st := p.state
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = signame.Name(ws.Signal())
		return
	}
	if sig := p.stderr.FatalSignal(); sig != "" && st.ExitCode() == 2 {
		e.Signal = sig
		return
	}
	if code := st.ExitCode(); p.cfg.Guard && code > 128 && code < 128+65 {
		e.Signal = signame.Name(syscall.Signal(code - 128)) // the guard's report of its command's death
		return
	}
	e.ExitCode = st.ExitCode()
}

// Kill kills the process group, closes the parent's pipe ends (unblocking
// any reader or writer) and waits until the process is reaped. (On Linux
// the group of a process that exits by itself is killed as it exits,
// before it is reaped.) On Linux it also kills, and reaps when they were
// re-parented to this process (BecomeSubreaper), the processes started
// on the process's behalf that left its group: its descendants, and
// those whose environment holds its TokenEnv.
func (p *Process) Kill() {
	p.killed.Do(func() {
		select {
		case <-p.done: // reaped (its group killed then): its pid may be reused
			reap(killAll(leftBehind(-1, p.token)))
		default:
			left := leftBehind(p.cmd.Process.Pid, p.token) // while its tree still hangs together
			_ = killGroup(p.cmd.Process.Pid)
			_ = p.cmd.Process.Kill()
			reap(killAll(left))
		}
		p.stdin.Close()
		p.stdout.Close()
	})
	<-p.done
}

// Stop ends the process cleanly: bye (unless nil) may write a last
// message to Stdin, which is then closed; a process that has not exited
// after grace is killed, with its group. Stop returns once the process is
// reaped.
func (p *Process) Stop(grace time.Duration, bye func()) {
	go func() {
		if bye != nil {
			bye()
		}
		p.stdin.Close()
	}()
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	p.Kill()
}

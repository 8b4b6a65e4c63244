package external

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/subproc"
)

// extProc is one running external executor process and its frame codec.
// It is used by one call at a time (Executor's gate).
type extProc struct {
	*subproc.Process
	name string // the executor's name in rxeq, for messages
	bw   *bufio.Writer
	br   *bufio.Reader

	hello    *inMsg
	nextID   uint64
	prepared map[int]map[string]string // program id -> its unserved functions
	maxPay   int64
}

// startExtProc starts argv and reads its hello within timeout.
func startExtProc(ctx context.Context, name string, argv, env []string, dir string, timeout time.Duration, maxPayload int64) (*extProc, error) {
	proc, err := subproc.Start(subproc.Config{Argv: argv, Env: env, Dir: dir, Executor: executor.Name(name), External: true, Guard: true,
		Crashed: ErrCrashed, TimedOut: ErrTimedOut, Protocol: ErrProtocol})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrStart, name, err)
	}
	p := &extProc{Process: proc, name: name, prepared: map[int]map[string]string{}, maxPay: maxPayload,
		bw: bufio.NewWriterSize(proc.Stdin(), 1<<16), br: bufio.NewReaderSize(proc.Stdout(), 1<<16)}
	m, err := p.exchange(ctx, timeout, "its hello", nil, nil)
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
		p.Kill()
		return nil, fmt.Errorf("%w: %s (%s): %w", ErrStart, name, strings.Join(argv, " "), err)
	}
	p.hello = m
	return p, nil
}

// exchange sends one request (unless send is nil) and reads one message,
// bounded by ctx and by timeout (when positive). what names the awaited
// answer for messages ("the result of score_linear"); want, when not nil,
// the outputs a result must have (readFrame). On any failure the process
// is killed and reaped, and the error says why
// (subproc.Process.Exchange): ErrTimedOut, ErrCrashed (it exited),
// ctx.Err(), or ErrProtocol (it answered garbage or closed its stdout).
//
// An answer is all the executor may write until the next request: bytes
// that follow it at once (a stray print after the frame) are a protocol
// violation of this call, not of the next one.
func (p *extProc) exchange(ctx context.Context, timeout time.Duration, what string, want map[string]wantTensor, send func(*bufio.Writer) error) (*inMsg, error) {
	var sendFrame func() error
	if send != nil {
		sendFrame = func() error { return send(p.bw) }
	}
	var m *inMsg
	err := p.Exchange(ctx, timeout, what, sendFrame, func() error {
		var err error
		m, err = readFrame(p.br, p.maxPay, want)
		if err == nil && !m.unread {
			err = p.stray(what)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stop ends the process cleanly: a close message and the end of its
// stdin; one that has not exited after grace is killed.
func (p *extProc) stop(grace time.Duration) {
	p.Stop(grace, func() { _ = writeFrame(p.bw, closeMsg{Type: msgClose}) })
}

// stray returns a protocol violation when bytes follow the answer just
// read, in the reader's buffer or in the pipe. The pipe is asked
// (FIONREAD) only when the last read filled what it asked for: a short
// read found the pipe empty, so whatever the executor wrote with its
// answer is in the buffer.
func (p *extProc) stray(what string) error {
	n := p.br.Buffered()
	if n == 0 && (p.Drained() || p.Pending() == 0) {
		return nil
	}
	more, _ := p.br.Peek(min(n, 60))
	if n == 0 {
		n = p.Pending()
	}
	return violation("garbage on stdout: %d or more bytes (%s) follow %s, before any request. Is something printing to stdout?", n, quoteBytes(more), what)
}

// dirty reports whether bytes have come from the process since its last
// answer: the process cannot be given a request, whose answer would be
// read from them.
func (p *extProc) dirty() bool { return p.br.Buffered() > 0 || p.Pending() > 0 }

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
	proc, err := subproc.Start(subproc.Config{Argv: argv, Env: env, Dir: dir, Executor: executor.Name(name), External: true,
		Crashed: ErrCrashed, TimedOut: ErrTimedOut, Protocol: ErrProtocol})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrStart, name, err)
	}
	p := &extProc{Process: proc, name: name, prepared: map[int]map[string]string{}, maxPay: maxPayload,
		bw: bufio.NewWriterSize(proc.Stdin(), 1<<16), br: bufio.NewReaderSize(proc.Stdout(), 1<<16)}
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
		p.Kill()
		return nil, fmt.Errorf("%w: %s (%s): %w", ErrStart, name, strings.Join(argv, " "), err)
	}
	p.hello = m
	return p, nil
}

// exchange sends one request (unless send is nil) and reads one message,
// bounded by ctx and by timeout (when positive). what names the awaited
// answer for messages ("the result of score_linear"). On any failure the
// process is killed and reaped, and the error says why
// (subproc.Process.Exchange): ErrTimedOut, ErrCrashed (it exited),
// ctx.Err(), or ErrProtocol (it answered garbage or closed its stdout).
func (p *extProc) exchange(ctx context.Context, timeout time.Duration, what string, send func(*bufio.Writer) error) (*inMsg, error) {
	var sendFrame func() error
	if send != nil {
		sendFrame = func() error { return send(p.bw) }
	}
	var m *inMsg
	err := p.Exchange(ctx, timeout, what, sendFrame, func() error {
		var err error
		m, err = readFrame(p.br, p.maxPay)
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

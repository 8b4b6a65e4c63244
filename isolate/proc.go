package isolate

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"strings"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/subproc"
)

// worker is one running worker process and its gob codec.
type worker struct {
	proc *subproc.Process
	bw   *bufio.Writer
	enc  *gob.Encoder
	dec  *gob.Decoder
}

// startWorker starts argv with env added to the environment, for the code
// of executor name, and reads its hello within helloTimeout (or until ctx
// is done).
func startWorker(ctx context.Context, name executor.Name, argv, env []string, helloTimeout time.Duration) (*worker, error) {
	if len(argv) == 0 {
		return nil, workerErr(name, "no worker command")
	}
	proc, err := subproc.Start(subproc.Config{Argv: argv, Env: env, GoChild: true, Executor: name,
		Crashed: ErrCrashed, TimedOut: ErrTimedOut, Protocol: errBadMessage})
	if err != nil {
		return nil, workerErr(name, "starting %s: %v", argv[0], err)
	}
	w := &worker{proc: proc, bw: bufio.NewWriter(proc.Stdin())}
	w.enc = gob.NewEncoder(w.bw)
	w.dec = gob.NewDecoder(bufio.NewReader(proc.Stdout()))

	var h hello
	err = w.exchange(ctx, helloTimeout, nil, &h)
	if err == nil && h.Protocol != protocolVersion {
		err = workerErr(name, "%s speaks %q, want %q (is it an rxeq binary of this version?)", argv[0], h.Protocol, protocolVersion)
	}
	if err != nil {
		w.proc.Kill()
		if errors.Is(err, ErrCrashed) || errors.Is(err, ErrTimedOut) {
			err = workerErr(name, "%s did not start: %v", strings.Join(argv, " "), err)
		}
		return nil, err
	}
	return w, nil
}

// exchange sends req (unless nil) and decodes one message into resp,
// bounded by ctx and by timeout (when positive). On any failure the worker
// is killed and reaped, and the error says why (subproc.Process.Exchange):
// ErrTimedOut, ErrCrashed (the process died), ctx.Err(), or ErrWorker (it
// answered garbage).
func (w *worker) exchange(ctx context.Context, timeout time.Duration, req, resp any) error {
	var send func() error
	if req != nil {
		send = func() error {
			if err := w.enc.Encode(req); err != nil {
				return err
			}
			return w.bw.Flush()
		}
	}
	return w.proc.Exchange(ctx, timeout, "", send, func() error { return w.dec.Decode(resp) })
}

// stop ends the worker cleanly: closing stdin makes Serve return; a worker
// that has not exited after grace is killed.
func (w *worker) stop(grace time.Duration) { w.proc.Stop(grace, nil) }

package subproc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
)

// Gate lets the calls to one process in one at a time, and remembers which
// call holds the process and since when, and which call last timed out,
// so that a call whose deadline comes while it waits can say why it never
// ran. Create one with NewGate; the zero Gate is not usable.
type Gate struct {
	subject string        // "the native worker"
	sem     chan struct{} // held by the current Turn
	mu      sync.Mutex    // guards busy, last
	busy    *Turn         // the turn holding the process, or nil
	last    *Turn         // the last turn that timed out, or nil
}

// NewGate returns a gate to the process subject names in texts ("the
// native worker", "the external executor pytorch").
func NewGate(subject string) *Gate {
	return &Gate{subject: subject, sem: make(chan struct{}, 1)}
}

// Turn is one call's hold on a Gate's process.
type Turn struct {
	g       *Gate
	name    string        // the call's name in texts
	queued  time.Time     // when it began to wait
	start   time.Time     // when it got the process
	end     time.Time     // when it timed out (TimedOut)
	timeout time.Duration // the timeout it outlived (TimedOut)
}

// Enter waits until the process is free and returns the turn of the call
// name (executor.CaseFrom of its context, or a description of the call).
// When ctx ends first, or has ended when the process comes free, the call
// never ran: the error wraps executor.ErrNotRun and ctx.Err() and says
// which call held the process, e.g. "not run: the native worker was busy
// with s/f/b4/native (running for 30s; s/g/b1/native timed out after 30s
// while this case waited) until this case's deadline: context deadline
// exceeded".
func (g *Gate) Enter(ctx context.Context, name string) (*Turn, error) {
	t := &Turn{g: g, name: name, queued: time.Now()}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, g.notRun(ctx, t.queued)
	}
	if ctx.Err() != nil {
		<-g.sem
		return nil, g.notRun(ctx, t.queued) // the process came free just as ctx ended
	}
	t.hold()
	return t, nil
}

// TryEnter returns a turn when the process is free now, else false.
func (g *Gate) TryEnter(name string) (*Turn, bool) {
	select {
	case g.sem <- struct{}{}:
	default:
		return nil, false
	}
	t := &Turn{g: g, name: name, queued: time.Now()}
	t.hold()
	return t, true
}

// hold makes t the turn holding the process.
func (t *Turn) hold() {
	t.start = time.Now()
	t.g.mu.Lock()
	t.g.busy = t
	t.g.mu.Unlock()
}

// Leave gives the process up. Call it once per turn.
func (t *Turn) Leave() {
	t.g.mu.Lock()
	if t.g.busy == t {
		t.g.busy = nil
	}
	t.g.mu.Unlock()
	<-t.g.sem
}

// TimedOut records that the call outlived timeout now: calls waiting
// meanwhile say so when their deadline comes.
func (t *Turn) TimedOut(timeout time.Duration) {
	t.g.mu.Lock()
	t.end, t.timeout = time.Now(), timeout
	t.g.last = t
	t.g.mu.Unlock()
}

// Ran adds to err, the error of a call whose context ended while it held
// the process, how long it ran and how long it waited for the process
// first, when it waited: "ERR (it ran 2s, after waiting 4s for the native
// worker)". The chain of err is kept.
func (t *Turn) Ran(err error) error {
	waited := t.start.Sub(t.queued)
	if waited < time.Millisecond {
		return err
	}
	return fmt.Errorf("%w (it ran %s, after waiting %s for %s)", err,
		time.Since(t.start).Round(time.Millisecond), waited.Round(time.Millisecond), t.g.subject)
}

// NotStarted is the error of a call whose context ended while it started
// the process (doing says so: "restarting the native worker"): the call
// was never sent. It wraps executor.ErrNotRun and ctx.Err(): "not run:
// restarting the native worker after s/g/b1/native timed out took until
// this case's deadline: context deadline exceeded".
func (t *Turn) NotStarted(ctx context.Context, doing string) error {
	t.g.mu.Lock()
	last := t.g.last
	t.g.mu.Unlock()
	after := ""
	if last != nil && last.end.After(t.queued) {
		after = " after " + last.name + " timed out"
	}
	return fmt.Errorf("%w: %s%s took until this case's deadline: %w", executor.ErrNotRun, doing, after, ctx.Err())
}

// notRun is the error of a call (queued then) whose ctx ended while it
// waited.
func (g *Gate) notRun(ctx context.Context, queued time.Time) error {
	g.mu.Lock()
	busy, last := g.busy, g.last
	g.mu.Unlock()
	if busy == nil {
		return fmt.Errorf("%w: the case's deadline came before %s took it: %w", executor.ErrNotRun, g.subject, ctx.Err())
	}
	why := g.subject + " was busy with " + busy.name
	notes := []string{"running for " + time.Since(busy.start).Round(time.Millisecond).String()}
	if last != nil && last != busy && last.end.After(queued) {
		notes = append(notes, fmt.Sprintf("%s timed out after %s while this case waited", last.name, last.timeout))
	}
	why += " (" + strings.Join(notes, "; ") + ")"
	return fmt.Errorf("%w: %s until this case's deadline: %w", executor.ErrNotRun, why, ctx.Err())
}

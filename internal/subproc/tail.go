package subproc

import (
	"regexp"
	"strings"
	"sync"
)

// Tail is an io.Writer that keeps the last bytes written to it: a child's
// stderr, for crash reports. For a Go child it also keeps the name of the
// first fatal signal the Go runtime reported ("SIGSEGV: segmentation
// violation" at the start of a line: the runtime turns a signal in C code
// into that report and exit status 2) and a snapshot of the output up to
// that report and the report's first lines, without the goroutine dump
// that follows.
type Tail struct {
	mu        sync.Mutex
	max       int
	goRuntime bool
	buf       []byte
	line      []byte // the current incomplete line (its first 64 bytes)
	signal    string
	snapshot  []byte
	more      int // report lines still to add to the snapshot
}

// NewTail returns a Tail that keeps the last max bytes; goRuntime says
// whether to watch for the Go runtime's fatal-signal report.
func NewTail(max int, goRuntime bool) *Tail {
	return &Tail{max: max, goRuntime: goRuntime}
}

// Write keeps p's bytes; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range p {
		t.buf = append(t.buf, c)
		if !t.goRuntime {
			continue
		}
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

// FatalSignal returns the signal the Go runtime reported ("SIGSEGV"), or
// "".
func (t *Tail) FatalSignal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.signal
}

// Report returns what the tail holds (the snapshot, when the Go runtime
// reported a fatal signal), trimmed of surrounding space.
func (t *Tail) Report() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.snapshot != nil {
		b = t.snapshot
	}
	return strings.TrimSpace(string(b))
}

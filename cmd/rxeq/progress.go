package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/harness"
)

// progressTick is how often the live bar is redrawn while no group
// finishes, so that its clock shows the run is alive during long compiles.
const progressTick = 250 * time.Millisecond

// barWidth is the number of cells of the live bar.
const barWidth = 24

// progress reports a run's progress on standard error while it runs. It
// never names a case: each case appears once in the run's output, in the
// table on standard output.
//
// On a terminal it draws one live line, redrawn in place as groups finish
// and every progressTick (before the first group finishes, while the
// programs are prepared, it says "preparing"), and cleared by finish:
//
//	[=========>              ] 23/69 groups  1 failed  12.3s  reference-scoring/score_mlp b16
//
// Otherwise (a CI log, a pipe) it writes a plain line each time another
// tenth of the groups has finished, so a log gets at most ten:
//
//	rxeq run: 30% (21/69 groups, 63 cases, 1 failed) 12.3s
type progress struct {
	w     io.Writer
	tty   bool
	width int // columns of the terminal; a drawn line is kept shorter
	start time.Time

	mu            sync.Mutex
	done, total   int // groups
	cases, failed int
	last          string // the group that finished last
	nextPercent   int    // plain lines: the next percentage to report at
	drawn         bool   // a live line is on the screen

	stop chan struct{}
	wg   sync.WaitGroup
}

// newProgress starts reporting to w, a terminal of width columns when
// tty (0: not known). finish must be called when the run ends.
func newProgress(w io.Writer, tty bool, width int) *progress {
	if width <= 0 {
		width = 80
	}
	p := &progress{w: w, tty: tty, width: width, start: time.Now(), nextPercent: 10, stop: make(chan struct{})}
	if tty {
		p.wg.Add(1)
		go p.tick()
	}
	return p
}

// tick redraws the live line until finish.
func (p *progress) tick() {
	defer p.wg.Done()
	t := time.NewTicker(progressTick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// group records a finished group; it is harness.Options.Progress.
func (p *progress) group(done, total int, cases []harness.Case) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	p.cases += len(cases)
	for _, c := range cases {
		if c.Status == harness.StatusFail || c.Status == harness.StatusError {
			p.failed++
		}
	}
	if len(cases) > 0 {
		p.last = fmt.Sprintf("%s/%s b%d", cases[0].Scenario, cases[0].Function, cases[0].Batch)
	}
	if p.tty {
		p.draw()
		return
	}
	if pct := done * 100 / max(total, 1); pct >= p.nextPercent || done == total {
		fmt.Fprintf(p.w, "rxeq run: %d%% (%d/%d groups, %d cases, %d failed) %.1fs\n",
			pct, done, total, p.cases, p.failed, time.Since(p.start).Seconds())
		p.nextPercent = (pct/10 + 1) * 10
	}
}

// draw redraws the live line; p.mu is held.
func (p *progress) draw() {
	filled := barWidth * p.done / max(p.total, 1)
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	line := fmt.Sprintf("[%s] %d/%d groups", bar, p.done, p.total)
	if p.total == 0 {
		// Before the first group finishes the runner has not said how
		// many there are: it is preparing the programs (compiling C).
		line = fmt.Sprintf("[%s] preparing", bar)
	}
	if p.failed > 0 {
		line += fmt.Sprintf("  %d failed", p.failed)
	}
	line += fmt.Sprintf("  %.1fs", time.Since(p.start).Seconds())
	if p.last != "" {
		line += "  " + p.last
	}
	// A line as wide as the terminal wraps, and \r then redraws only its
	// last part.
	if r := []rune(line); len(r) > p.width-1 {
		line = strings.TrimRight(string(r[:p.width-1]), " ")
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// finish stops the redrawing and clears the live line.
func (p *progress) finish() {
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	_, ok := terminalWidth(w)
	return ok
}

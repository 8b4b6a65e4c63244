package lock

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/rextio/rxeq/program"
)

// lockBody is the scope of a source lock: one function's body, with the
// line bookkeeping that failure messages need.
type lockBody struct {
	name      string
	text      string // the body, strictly between the braces
	offset    int    // offset of text in the C source
	firstLine int    // line of the opening brace
	lastLine  int    // line of the closing brace
	lines     []string
	startLine int // line of the C source holding text[0]
}

func newLockBody(csrc []byte, d *cDef) *lockBody {
	b := &lockBody{name: d.Name, text: string(csrc[d.Open+1 : d.Close]), offset: d.Open + 1}
	b.firstLine = 1 + strings.Count(string(csrc[:d.Open]), "\n")
	b.lastLine = b.firstLine + strings.Count(string(csrc[d.Open:d.Close]), "\n")
	b.startLine = b.firstLine
	lineBegin := strings.LastIndexByte(string(csrc[:d.Open]), '\n') + 1
	lineEnd := d.Close + strings.IndexByte(string(csrc[d.Close:])+"\n", '\n')
	b.lines = strings.Split(string(csrc[lineBegin:lineEnd]), "\n")
	return b
}

// lineOf returns the C source line of body offset i.
func (b *lockBody) lineOf(i int) int { return b.startLine + strings.Count(b.text[:i], "\n") }

// missDetail explains a positive check that found nothing from offset pos,
// noting when the pattern does occur earlier in the body (out of order).
func (b *lockBody) missDetail(l program.Lock, pos int) string {
	if pos > 0 {
		if s, _, err := findLock(l, b.text, 0); err == nil && s >= 0 {
			return fmt.Sprintf("no match after the search start; it does match at line %d, before it (checks match in order)", b.lineOf(s))
		}
	}
	return "no match after the search start"
}

// failure formats a failed check: function, check, search start, detail
// and the body with line mark marked (mark -1: none).
func (b *lockBody) failure(l program.Lock, detail string, pos, prevLine, mark int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "source lock failed in function %s: %s\n", b.name, describeLock(l))
	switch {
	case l.Kind == program.LockNot:
		fmt.Fprintf(&s, "  searched the whole body (lines %d-%d)\n", b.firstLine, b.lastLine)
	case prevLine == 0:
		fmt.Fprintf(&s, "  search started at line %d (the top of the body)\n", b.lineOf(pos))
	default:
		fmt.Fprintf(&s, "  search started at line %d (after the previous check matched at line %d)\n", b.lineOf(pos), prevLine)
	}
	fmt.Fprintf(&s, "  %s\n", detail)
	switch {
	case mark < 0:
		fmt.Fprintf(&s, "  generated body of %s (no near-miss line):\n", b.name)
	case l.Kind == program.LockNot:
		fmt.Fprintf(&s, "  generated body of %s (>> marks the line where it appears):\n", b.name)
	default:
		fmt.Fprintf(&s, "  generated body of %s (>> marks the nearest near-miss, line %d):\n", b.name, mark)
	}
	show := b.shownLines(b.lineOf(pos), prevLine, mark)
	for i := 0; i < len(b.lines); i++ {
		if !show[i] {
			j := i
			for j < len(b.lines) && !show[j] {
				j++
			}
			fmt.Fprintf(&s, "          ⋮ (%d lines not shown)\n", j-i)
			i = j - 1
			continue
		}
		n := b.firstLine + i
		prefix := "  "
		if n == mark {
			prefix = ">>"
		}
		fmt.Fprintf(&s, "  %s %4d | %s\n", prefix, n, b.lines[i])
	}
	return strings.TrimRight(s.String(), "\n")
}

// lockContext is how many lines a failure shows on each side of the lines
// that matter, as FileCheck's annotated input does.
const lockContext = 5

// shownLines says, for each line of the body, whether a failure message
// shows it: the lines within lockContext of the body's first line and of
// each of lines (the search start, the previous match, the marked line; 0
// or less: none). A lone hidden line is shown rather than replaced by a
// marker that takes a line itself.
func (b *lockBody) shownLines(lines ...int) []bool {
	show := make([]bool, len(b.lines))
	for _, l := range append(lines, b.firstLine) {
		if l <= 0 {
			continue
		}
		for n := l - lockContext; n <= l+lockContext; n++ {
			if i := n - b.firstLine; i >= 0 && i < len(show) {
				show[i] = true
			}
		}
	}
	for i := range show {
		alone := (i == 0 || show[i-1]) && (i+1 == len(show) || show[i+1])
		if !show[i] && alone {
			show[i] = true
		}
	}
	return show
}

// nearMiss returns the C line of the body closest to check l, preferring
// lines at or after the search start on ties, or -1 when no line is close
// at all. Literal: the smallest edit distance between the literal and a
// substring of the line. Regexp: the most shared identifier/number tokens.
func (b *lockBody) nearMiss(l program.Lock, pos int) int {
	startLine := b.lineOf(pos)
	best, bestScore := -1, 0
	better := func(n, score int) {
		switch {
		case best < 0 || score > bestScore:
			best, bestScore = n, score
		case score == bestScore && best < startLine && n >= startLine:
			best = n
		}
	}
	if !l.Regexp {
		want := strings.TrimSpace(l.Text)
		for i, text := range b.lines {
			if strings.TrimSpace(text) == "" {
				continue
			}
			d := substringDistance(want, text)
			if d >= len(want) {
				continue // shares nothing useful
			}
			better(b.firstLine+i, -d)
		}
		return best
	}
	want := tokens(unescapeRegexp(l.Text))
	for i, text := range b.lines {
		have := map[string]bool{}
		for _, t := range tokens(text) {
			have[t] = true
		}
		shared := 0
		seen := map[string]bool{}
		for _, t := range want {
			if have[t] && !seen[t] {
				shared++
				seen[t] = true
			}
		}
		if shared > 0 {
			better(b.firstLine+i, shared)
		}
	}
	return best
}

// substringDistance is the smallest Levenshtein distance between p and
// any substring of t (Sellers' algorithm).
func substringDistance(p, t string) int {
	prev := make([]int, len(t)+1) // row i-1 over t positions; row 0 is all zero
	cur := make([]int, len(t)+1)
	for i := 1; i <= len(p); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if p[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	best := len(p)
	for _, v := range prev {
		best = min(best, v)
	}
	return best
}

var tokenRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|[0-9]+`)

func tokens(s string) []string { return tokenRE.FindAllString(s, -1) }

// unescapeRegexp drops regexp escapes and classes so that the words of a
// pattern can be compared with a line: `for \(int64_t \w+ = 0` gives
// "for (int64_t   = 0".
func unescapeRegexp(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if isIdent(s[i]) { // \w, \d, \s, \b ...: a class, not a word
				b.WriteByte(' ')
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

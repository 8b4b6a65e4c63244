package lock

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/rextio/rxeq/program"
)

// CheckResult is the outcome of one //rx:lock or //rx:lock-not check.
type CheckResult struct {
	Lock program.Lock
	OK   bool
	// Skipped is set on a positive check that was not tried because an
	// earlier positive check of the same function failed (checks are
	// ordered, so its search start is unknown).
	Skipped bool
	// Line is the line of the generated C where a positive check matched,
	// or where a lock-not pattern was found; 0 when there is none.
	Line    int
	Message string // why the check failed; "" when OK or Skipped
}

// Result is the outcome of the source lock of one function.
type Result struct {
	Func  string // the C function name
	OK    bool
	Found bool // the function's definition was found in the C text
	// BodyLines are the first and last line of the function's body in the
	// generated C (the lines of its braces).
	BodyLines [2]int
	Checks    []CheckResult
	// Message is the failure text (every failed check, each with the body
	// and its near-miss line); "" when OK.
	Message string
}

// Check checks the //rx:lock and //rx:lock-not lines of one function
// against the generated C source csrc, scoped to the body of the C
// function cfunc.
//
// Scope: the body of the first top-level definition of cfunc, found
// structurally (see below); the text strictly between its braces. Nothing
// outside it — another function, the prototypes, the file header — can
// satisfy or violate a check. When cfunc has no definition every check
// fails.
//
// Finding the body: comments, string and character literals and
// preprocessor lines are blanked out; then a '{' at brace depth 0 that
// follows (after white space) the ')' of a parameter list preceded by the
// identifier cfunc opens the body, which ends at the matching '}'. A
// prototype ("cfunc(...);") is not a definition.
//
// Order: positive checks (program.LockMatch) apply in order, like
// FileCheck's CHECK lines under a CHECK-LABEL: each must match at or
// after the end of the previous positive match, the first searching from
// the top of the body. After a positive check fails, the later ones are
// Skipped. A "..." check (Regexp false) is a literal substring; a `...`
// check is an RE2 regular expression (package regexp; an invalid one fails
// the check) matched leftmost-first.
//
// lock-not: a program.LockNot check must not match anywhere in the body
// (not merely between its neighbouring positive checks: simpler to state
// and stricter). It is checked whatever the positive checks did.
//
// A failure message names the function, the check with its .rx position,
// where the search started (a line of the generated C), and prints the
// generated body with the nearest near-miss line marked ">>": for a
// literal, the line containing the substring closest to it in edit
// distance; for a regexp, the line sharing the most identifier and number
// tokens with it. A lock-not failure marks the line where the pattern was
// found.
func Check(csrc []byte, cfunc string, locks []program.Lock) Result {
	res := Result{Func: cfunc}
	var def *cDef
	defs := cDefinitions(csrc)
	for i := range defs {
		if defs[i].Name == cfunc {
			def = &defs[i]
			break
		}
	}
	if def == nil {
		names := make([]string, len(defs))
		for i, d := range defs {
			names[i] = d.Name
		}
		msg := fmt.Sprintf("source lock of %s: no definition of function %s in the generated C (functions defined: %s)", cfunc, cfunc, strings.Join(names, ", "))
		for _, l := range locks {
			res.Checks = append(res.Checks, CheckResult{Lock: l, Message: msg})
		}
		res.Message = msg
		return res
	}
	res.Found = true
	b := newLockBody(csrc, def)
	res.BodyLines = [2]int{b.firstLine, b.lastLine}

	var failures []string
	vars := map[string]string{} // [[NAME:RE]] definitions so far
	pos, prevLine, prevEnd, failed := 0, 0, 0, false
	for _, l := range locks {
		if !l.Kind.Positive() {
			continue
		}
		r := CheckResult{Lock: l}
		if failed {
			r.Skipped = true
			res.Checks = append(res.Checks, r)
			continue
		}
		from, limit := pos, len(b.text) // where the match may start
		switch l.Kind {
		case program.LockNext:
			// The line after the previous match's last line.
			from = lineEnd(b.text, prevEnd) + 1
			limit = lineEnd(b.text, min(from, len(b.text)))
			from = min(from, len(b.text))
		case program.LockSame:
			limit = lineEnd(b.text, pos)
		}
		start, end, defs, err := findLockVars(l, b.text, from, vars)
		switch {
		case err != nil:
			r.Message = b.failure(l, fmt.Sprintf("invalid regexp: %v", err), from, prevLine, -1)
		case start < 0 || start > limit:
			detail := b.missDetail(l, from)
			switch l.Kind {
			case program.LockNext:
				detail = fmt.Sprintf("no match on line %d, the line after the previous match (lock-next)", b.lineOf(from))
				if start >= 0 {
					detail += fmt.Sprintf("; it matches later, at line %d", b.lineOf(start))
				}
			case program.LockSame:
				detail = fmt.Sprintf("no match on line %d after the previous match (lock-same)", prevLine)
			}
			r.Message = b.failure(l, detail, from, prevLine, b.nearMiss(l, from))
		default:
			r.OK = true
			r.Line = b.lineOf(start)
			pos, prevLine, prevEnd = end, r.Line, max(start, end-1)
			for k, v := range defs {
				vars[k] = v
			}
		}
		if !r.OK {
			failed = true
			failures = append(failures, r.Message)
		}
		res.Checks = append(res.Checks, r)
	}
	for _, l := range locks {
		if l.Kind != program.LockNot {
			continue
		}
		r := CheckResult{Lock: l}
		start, _, _, err := findLockVars(l, b.text, 0, vars)
		switch {
		case err != nil:
			r.Message = b.failure(l, fmt.Sprintf("invalid regexp: %v", err), 0, 0, -1)
		case start >= 0:
			r.Line = b.lineOf(start)
			r.Message = b.failure(l, fmt.Sprintf("must not appear in the body, but does at line %d", r.Line), 0, 0, r.Line)
		default:
			r.OK = true
		}
		if !r.OK {
			failures = append(failures, r.Message)
		}
		res.Checks = append(res.Checks, r)
	}
	res.OK = len(failures) == 0
	res.Message = strings.Join(failures, "\n")
	return res
}

// lineEnd returns the offset of the newline that ends the line holding
// offset i of text (len(text) on the last line).
func lineEnd(text string, i int) int {
	if i >= len(text) {
		return len(text)
	}
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// findLockVars is findLock for a check that may define or use variables
// ([[NAME:RE]], [[NAME]]; program.Lock.Pattern): it also returns the
// values the match defines.
func findLockVars(l program.Lock, text string, from int, vars map[string]string) (start, end int, defs map[string]string, err error) {
	if !l.HasVars() {
		start, end, err = findLock(l, text, from)
		return start, end, nil, err
	}
	pat, _, err := l.Pattern(vars)
	if err != nil {
		return -1, -1, nil, err
	}
	re := regexp.MustCompile(pat)
	loc := re.FindStringSubmatchIndex(text[from:])
	if loc == nil {
		return -1, -1, nil, nil
	}
	defs = map[string]string{}
	for i, n := range re.SubexpNames() {
		if n != "" && loc[2*i] >= 0 {
			defs[n] = text[from+loc[2*i] : from+loc[2*i+1]]
		}
	}
	return from + loc[0], from + loc[1], defs, nil
}

// findLock finds check l in text at or after offset from and returns the
// match's offsets, or start -1.
func findLock(l program.Lock, text string, from int) (start, end int, err error) {
	if !l.Regexp {
		i := strings.Index(text[from:], l.Text)
		if i < 0 {
			return -1, -1, nil
		}
		return from + i, from + i + len(l.Text), nil
	}
	re, err := regexp.Compile(l.Text)
	if err != nil {
		return -1, -1, err
	}
	loc := re.FindStringIndex(text[from:])
	if loc == nil {
		return -1, -1, nil
	}
	return from + loc[0], from + loc[1], nil
}

// describeLock prints a check as written in the .rx file, with its
// position: //rx:lock "text" (file.rx:12:3).
func describeLock(l program.Lock) string {
	kw := "//rx:" + l.Kind.String()
	q := fmt.Sprintf("%q", l.Text)
	if l.Regexp {
		q = "`" + l.Text + "`"
	}
	return fmt.Sprintf("%s %s (%s)", kw, q, l.Pos)
}

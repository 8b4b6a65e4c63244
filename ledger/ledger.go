// Package ledger reads rxeq's known-discrepancy ledger: the documented
// places where a framework computes something other than rxeq's
// contract (the oracle's semantics). A case or a fuzz finding that an
// entry matches is reported as xfail (expected to fail) rather than as a
// failure; an entry whose own reproducer no longer fails is reported as
// xpass, which `--strict` turns into a failure, as pytest's strict xfail
// does. Nothing is made to agree silently: xfail cases are counted and
// listed apart.
//
// The ledger is a JSON file (schema "rxeq.ledger/v1"); the one checked in
// as ledger/known.json is embedded (Default) and documented entry by
// entry in docs/findings.md. The format is described in docs/findings.md
// and by Entry's fields. The package is a leaf: it matches plain strings
// (executor names, versions, categories, op and value classes) and knows
// no executor.
package ledger

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Schema is the schema string of a ledger file.
const Schema = "rxeq.ledger/v1"

// ErrLedger is the kind of every error about a malformed ledger.
var ErrLedger = errors.New("bad ledger")

//go:embed known.json
var known []byte

//go:embed programs
var programs embed.FS

// Ledger is a parsed ledger.
type Ledger struct {
	Schema  string  `json:"schema"`
	Entries []Entry `json:"entries"`
}

// Entry is one known discrepancy.
type Entry struct {
	// ID names the entry (letters, digits, '-'); unique in its ledger.
	ID string `json:"id"`
	// Executor is the executor's name ("torch").
	Executor string `json:"executor"`
	// Framework names what the executor runs ("libtorch (ATen)").
	Framework string `json:"framework"`
	// Versions is the framework's version range the entry holds for:
	// space-separated bounds ">=1.13", "<2.0", "=1.13.1" (all must hold;
	// dotted numbers compare numerically); "" is every version.
	Versions string `json:"versions"`
	// Category is the finding's category before the ledger matched it
	// (signed-zero, nan-inf, …).
	Category string `json:"category"`
	// Match is what a finding or a case must show to match.
	Match Matcher `json:"match"`
	// Explanation says what the framework does and why it differs.
	Explanation string `json:"explanation"`
	// Upstream is the framework's tracker reference, "" when none is known.
	Upstream string `json:"upstream,omitempty"`
	// Program is the entry's reproducer, a .rx file relative to the
	// ledger file (for the embedded ledger: in ledger/); running it
	// through Executor must fail while the discrepancy holds. When it
	// passes, the entry is reported as xpass.
	Program string `json:"program,omitempty"`
}

// Matcher selects the findings and cases of an entry. Every field that
// is set must hold.
type Matcher struct {
	// Ops: at least one of these ops appears in the (reduced) program.
	Ops []string `json:"ops,omitempty"`
	// Values: the value class of the mismatch (opposite-inf, nan, inf,
	// signed-zero, finite, class), one of these.
	Values []string `json:"values,omitempty"`
	// Output: the output's name (rarely useful for fuzzed programs).
	Output string `json:"output,omitempty"`
	// Scenario: the .rx file's //rx:scenario name (a catalog case).
	Scenario string `json:"scenario,omitempty"`
	// Error: a text the executor's error contains, for a discrepancy
	// that is a failure of the executor where the oracle succeeds (an
	// error-mismatch whose program holds no telling op, such as a model
	// the framework refuses to load). Matched as a substring, case and
	// all.
	Error string `json:"error,omitempty"`
}

// Case is what a finding or a failing case shows, matched against the
// entries.
type Case struct {
	Executor, Version, Category string
	Ops                         []string
	Values, Output, Scenario    string
	// Error is the executor's error text ("" when it did not fail).
	Error string
}

// Default returns the checked-in ledger (ledger/known.json).
func Default() *Ledger {
	l, err := Parse(known)
	if err != nil {
		panic(fmt.Sprintf("ledger: the embedded known.json: %v", err))
	}
	return l
}

// DefaultProgram returns the embedded reproducer of an entry of the
// default ledger.
func DefaultProgram(name string) ([]byte, error) {
	b, err := programs.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%w: no embedded program %q: %w", ErrLedger, name, err)
	}
	return b, nil
}

// Load reads a ledger file.
func Load(path string) (*Ledger, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLedger, err)
	}
	l, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// Parse parses and validates a ledger.
func Parse(b []byte) (*Ledger, error) {
	var l Ledger
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLedger, err)
	}
	if l.Schema != Schema {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrLedger, l.Schema, Schema)
	}
	seen := map[string]bool{}
	for i, e := range l.Entries {
		switch {
		case e.ID == "" || seen[e.ID]:
			return nil, fmt.Errorf("%w: entry %d: missing or repeated id %q", ErrLedger, i, e.ID)
		case e.Executor == "":
			return nil, fmt.Errorf("%w: entry %s: no executor", ErrLedger, e.ID)
		case e.Explanation == "":
			return nil, fmt.Errorf("%w: entry %s: no explanation", ErrLedger, e.ID)
		}
		if _, err := parseRange(e.Versions); err != nil {
			return nil, fmt.Errorf("%w: entry %s: %w", ErrLedger, e.ID, err)
		}
		seen[e.ID] = true
	}
	return &l, nil
}

// Match returns the first entry that c matches, or nil.
func (l *Ledger) Match(c Case) *Entry {
	if l == nil {
		return nil
	}
	for i := range l.Entries {
		if l.Entries[i].Matches(c) {
			return &l.Entries[i]
		}
	}
	return nil
}

// Matches reports whether c is this entry's discrepancy: the same
// executor, a version in range, the same category (when the entry names
// one and c has one) and every matcher field that is set.
func (e *Entry) Matches(c Case) bool {
	if e.Executor != c.Executor || !e.InRange(c.Version) {
		return false
	}
	if e.Category != "" && c.Category != "" && e.Category != c.Category {
		return false
	}
	m := e.Match
	if len(m.Ops) > 0 && !slices.ContainsFunc(m.Ops, func(op string) bool { return slices.Contains(c.Ops, op) }) {
		return false
	}
	if len(m.Values) > 0 && !slices.Contains(m.Values, c.Values) {
		return false
	}
	if m.Output != "" && m.Output != c.Output {
		return false
	}
	if m.Scenario != "" && m.Scenario != c.Scenario {
		return false
	}
	if m.Error != "" && !strings.Contains(c.Error, m.Error) {
		return false
	}
	return true
}

// InRange reports whether version is in the entry's range. An unknown
// version ("") is in every range.
func (e *Entry) InRange(version string) bool {
	if version == "" {
		return true
	}
	bounds, _ := parseRange(e.Versions)
	v := parseVersion(version)
	for _, b := range bounds {
		c := compareVersions(v, b.v)
		ok := map[string]bool{">=": c >= 0, ">": c > 0, "<": c < 0, "<=": c <= 0, "=": c == 0}[b.op]
		if !ok {
			return false
		}
	}
	return true
}

// Text is the entry in one line, for a JUnit <skipped> message and the
// terminal: "torch-maximum-signed-zero: <explanation> (<upstream>)".
func (e *Entry) Text() string {
	s := e.ID + ": " + e.Explanation
	if e.Upstream != "" {
		s += " (" + e.Upstream + ")"
	}
	return s
}

type bound struct {
	op string
	v  []int
}

func parseRange(s string) ([]bound, error) {
	var out []bound
	for _, f := range strings.Fields(s) {
		i := strings.IndexFunc(f, func(r rune) bool { return r >= '0' && r <= '9' })
		if i <= 0 || !slices.Contains([]string{">=", ">", "<", "<=", "="}, f[:i]) {
			return nil, fmt.Errorf("version bound %q: want >=V, >V, <V, <=V or =V", f)
		}
		out = append(out, bound{op: f[:i], v: parseVersion(f[i:])})
	}
	return out, nil
}

// parseVersion reads the leading dotted numbers of a version ("1.13.1",
// "1.13.1+cpu" → [1 13 1]).
func parseVersion(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ".") {
		j := 0
		for j < len(part) && part[j] >= '0' && part[j] <= '9' {
			j++
		}
		if j == 0 {
			break
		}
		n, _ := strconv.Atoi(part[:j])
		out = append(out, n)
		if j < len(part) {
			break
		}
	}
	return out
}

func compareVersions(a, b []int) int {
	for i := range max(len(a), len(b)) {
		x, y := 0, 0
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

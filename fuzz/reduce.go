package fuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
)

// ErrBudget is the kind of the error a Reducer returns, with the
// smallest program found so far, when its budget is spent.
var ErrBudget = errors.New("reduction budget spent")

// ReduceStats says how a reduction went.
type ReduceStats struct {
	Tries    int           // candidates tried (each parsed, and tested when it checks)
	Tested   int           // candidates that checked and were run through stillFails
	Accepted int           // candidates kept
	Elapsed  time.Duration // wall time of the reduction
}

// A Reducer bounds a reduction. Every candidate costs a full check of the
// program, which with the native backend includes a C compile (a few
// milliseconds with tcc and candidates built several at once, see
// ReduceFinding; a tenth of a second or more with gcc alone), so `rxeq
// fuzz` reduces each finding within a budget and saves the smallest
// program found when it is spent. The zero Reducer has no bound.
type Reducer struct {
	// MaxTests stops the reduction after this many candidates were run
	// through stillFails; 0 means no bound.
	MaxTests int
	// MaxTime stops the reduction after this much wall time; the check
	// running then is cancelled through its context. 0 means no bound.
	MaxTime time.Duration
}

// Reduce is Reducer{}.Reduce: a reduction without a budget.
func Reduce(ctx context.Context, src []byte, stillFails func(context.Context, []byte) bool) ([]byte, ReduceStats, error) {
	return Reducer{}.Reduce(ctx, src, stillFails)
}

// ReduceFinding is Reducer{}.ReduceFinding: a reduction without a budget.
func ReduceFinding(ctx context.Context, src []byte, f Finding, c *Checker) ([]byte, ReduceStats, error) {
	return Reducer{}.ReduceFinding(ctx, src, f, c)
}

// Reduce shrinks src while stillFails keeps holding, and returns the
// smallest program found (src itself if nothing smaller fails).
//
// It works on the go/ast of the program and re-prints it after every
// step: it drops functions, results (with the statements that assign
// them) and parameters (with their //rx:input directives), deletes
// statements, replaces an if or a for by its body, replaces expressions
// by their operands or by constants, lowers loop counts, shrinks
// constant and literal dimensions, and drops batches or makes them
// smaller. A candidate is kept only when it still passes program.Parse
// and stillFails returns true; the steps repeat until none applies.
// Comments other than the file-level directives are not kept (nor are
// //rx:lock directives, which do not take part in a disagreement).
//
// stillFails is called only with programs that check, and with a
// context that ends with ctx or when the time budget is spent. When ctx
// ends the best program so far is returned with an error wrapping
// ctx.Err(); when the budget is spent, with an error wrapping ErrBudget.
// src must check (ErrProgram otherwise).
func (r Reducer) Reduce(ctx context.Context, src []byte, stillFails func(context.Context, []byte) bool) ([]byte, ReduceStats, error) {
	return r.reduce(ctx, src, stillFails, nil)
}

// maxAhead bounds how many candidates a reduction builds ahead at once.
const maxAhead = 16

// reduce is Reduce; when prebuild is not nil it is handed, before a
// candidate that was not handed to it is tested, the candidates that will
// be tested next if the reduction goes as predicted (Checker.Prebuild
// builds them with one compiler run): each candidate kept when most
// candidates so far were, else each one rejected. How many adapts: twice
// as many as last time when every candidate of the last window was
// tested, else two, up to maxAhead. Which candidates are tested, and so
// the result, does not depend on it.
func (r Reducer) reduce(ctx context.Context, src []byte, stillFails func(context.Context, []byte) bool, prebuild func(context.Context, [][]byte)) ([]byte, ReduceStats, error) {
	var st ReduceStats
	start := time.Now()
	if _, err := program.Parse("fuzz.rx", src); err != nil {
		return src, st, fmt.Errorf("%w: %w", ErrProgram, err)
	}
	cur, err := canonical(src)
	if err != nil {
		return src, st, err
	}
	if r.MaxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.MaxTime, fmt.Errorf("%w: %v of reduction time", ErrBudget, r.MaxTime))
		defer cancel()
	}
	// test runs one candidate within the budget; the error is non-nil
	// when the budget or ctx ended before or during the test.
	test := func(cand []byte) (fails bool, err error) {
		if r.MaxTests > 0 && st.Tested >= r.MaxTests {
			return false, fmt.Errorf("%w: %d candidates tested", ErrBudget, st.Tested)
		}
		if ctx.Err() != nil {
			return false, stopped(ctx)
		}
		st.Tested++
		fails = stillFails(ctx, cand)
		if ctx.Err() != nil {
			return false, stopped(ctx) // a test cut short says nothing
		}
		return fails, nil
	}
	if !bytes.Equal(cur, src) {
		fails, err := test(cur)
		if err != nil {
			st.Elapsed = time.Since(start)
			return src, st, err
		}
		if !fails {
			cur = src // the canonical form lost the failure (it should not): reduce from the original's form
		}
	}
	built := map[string]bool{} // candidates handed to prebuild
	window := 1
	var last map[string]bool // the last window's candidates not yet tested
	for progress := true; progress; {
		progress = false
		for pi, pass := range passes {
			for k := 0; ; {
				if ctx.Err() != nil {
					st.Elapsed = time.Since(start)
					return tidy(cur), st, stopped(ctx)
				}
				cand, n := applyEdit(cur, pass, k)
				if k >= n {
					break
				}
				st.Tries++
				if cand != nil && !bytes.Equal(cand, cur) && checks(cand) {
					if prebuild != nil && !built[string(cand)] {
						window = min(2*window, maxAhead)
						if len(last) > 0 {
							window = 2 // a misprediction
						}
						next := ahead(cur, pi, k, window, 2*st.Accepted >= st.Tested)
						last = map[string]bool{}
						for _, c := range next {
							built[string(c)] = true
							last[string(c)] = true
						}
						prebuild(ctx, next)
					}
					delete(last, string(cand))
					fails, err := test(cand)
					if err != nil {
						st.Elapsed = time.Since(start)
						return tidy(cur), st, err
					}
					if fails {
						cur = cand
						st.Accepted++
						progress = true
						continue // the same index now names the next site
					}
				}
				k++
			}
		}
	}
	if c := compact(cur); !bytes.Equal(c, cur) && checks(c) {
		if fails, err := test(c); err == nil && fails {
			cur = c
		}
	}
	st.Elapsed = time.Since(start)
	return cur, st, nil
}

// ahead returns up to n candidates that check, in the order the reduction
// tests them from pass passes[pi], edit k on, when each is kept (keep) or
// each is rejected.
func ahead(cur []byte, pi, k, n int, keep bool) [][]byte {
	var out [][]byte
	for tries := 0; pi < len(passes) && len(out) < n && tries < 4*n; tries++ {
		cand, count := applyEdit(cur, passes[pi], k)
		if k >= count {
			pi, k = pi+1, 0
			continue
		}
		if cand != nil && !bytes.Equal(cand, cur) && checks(cand) {
			out = append(out, cand)
			if keep {
				cur = cand
				continue // the same index now names the next site
			}
		}
		k++
	}
	return out
}

// stopped is the error of a reduction whose context ended: the budget's
// cause, or ctx.Err() wrapped.
func stopped(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrBudget) {
		return cause
	}
	return fmt.Errorf("reduce: %w", ctx.Err())
}

// tidy is cur compacted, for a reduction stopped before its final,
// tested compaction: dropping blank lines cannot change what a program
// does, so it is kept whenever the program still checks.
func tidy(cur []byte) []byte {
	if c := compact(cur); checks(c) {
		return c
	}
	return cur
}

// compact drops the blank lines that deleted statements leave inside
// function bodies.
func compact(src []byte) []byte {
	lines := strings.Split(string(src), "\n")
	var out []string
	for i, l := range lines {
		if strings.TrimSpace(l) == "" && i > 0 && i+1 < len(lines) {
			prev := strings.TrimSpace(lines[i-1])
			next := strings.TrimSpace(lines[i+1])
			if strings.HasPrefix(lines[i-1], "\t") || strings.HasSuffix(prev, "{") || strings.HasPrefix(next, "}") || next == "" {
				continue
			}
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// ReduceFinding reduces src within r's budget keeping finding f: a
// candidate still fails when c.Check reports a finding with f's
// signature. Candidates run only through the executor f names (and the
// reference): a fallback finding does not pay for a C compile per
// candidate because native is also in c. When that executor is a
// Prebuilder, the candidates the reduction expects to test next are
// built together ahead of their checks (see Checker.Prebuild).
func (r Reducer) ReduceFinding(ctx context.Context, src []byte, f Finding, c *Checker) ([]byte, ReduceStats, error) {
	sig := f.Signature()
	only := c.reducing(f)
	return r.reduce(ctx, src, func(ctx context.Context, cand []byte) bool {
		rep, err := only.Check(ctx, cand)
		return err == nil && rep.Has(sig)
	}, func(ctx context.Context, cands [][]byte) {
		_ = only.Prebuild(ctx, cands) // an optimisation: a failed build means each candidate builds alone
	})
}

// reducing returns the checker of f's candidates: c with f's executor
// (and its reference) alone, and only the checks that can show a finding
// of f's signature, whose kind is part of it. Only a metamorphic finding
// comes from the variants, and only a position finding from the
// invariance check: without them a candidate fails the same way, for half
// the builds and none of the rearranged runs (a candidate that no longer
// shows a mismatch would otherwise go on to five more runs per function
// to look for a position finding the reduction cannot use); and a
// position finding needs its own executor's invariance alone.
func (c *Checker) reducing(f Finding) *Checker {
	only := c.only(f.Executor, f.Reference)
	if f.Kind != KindMetamorphic {
		only.Metamorphic = 0
	}
	if f.Kind != KindPosition {
		only.Invariance = false
	} else {
		// The finding's executor against itself: the reference's
		// invariance (the oracle's float64 runs) cannot show it.
		only.invarianceOf = f.Executor
	}
	return only
}

// Reclassify returns f with the value and shape classes that small, its
// reduced program, shows: a reduction keeps the finding's signature (the
// executor, function, output and kind) but may change what the
// disagreeing elements hold (a program of ten statements shows an
// infinity against a finite value where its reduction shows +Inf against
// -Inf), and the finding's record pairs the reduced program's ops with its
// values, so the ledger and the dedup key see one program. f is returned
// unchanged when small no longer shows it (a reduction stopped by its
// budget still fails; a flaky finding may not).
func Reclassify(ctx context.Context, small []byte, f Finding, c *Checker) Finding {
	rep, err := c.reducing(f).Check(ctx, small)
	if err != nil {
		return f
	}
	sig := f.Signature()
	for _, g := range rep.Findings {
		if g.Signature() == sig {
			f.Values, f.Shape = g.Values, g.Shape
			if g.Framework != "" {
				f.Framework = g.Framework
			}
			return f
		}
	}
	return f
}

// ReduceChecker is the checker that reduces f: pooled, one whose
// executors keep a worker process for every candidate (a slot of own,
// Checker.Slot), or, when f.Crashed (a crash or a timeout), own, whose
// executors start a worker per candidate. A candidate that still crashes
// would crash a shared worker, and its call would then run again alone in
// a new one, so sharing would only add a worker and a build to nearly
// every candidate.
func ReduceChecker(f Finding, pooled, own *Checker) *Checker {
	if f.Crashed {
		return own
	}
	return pooled
}

// only returns a copy of c whose executors are those named name, or all
// of c's when none is (a finding of the reference), without the round
// trip; for name RoundTripName, a copy that checks the round trip alone
// (ReferenceOnly, no invariance). When ref, the
// finding's reference, is one of c's executors too (the twin that a
// variant must equal bit for bit, executor.Twin), it is kept as well.
func (c *Checker) only(name, ref executor.Name) *Checker {
	var keep []executor.Executor
	for _, e := range c.Executors {
		if e.Name() == name || (e.Name() == ref && executor.TwinOf(c.executorNamed(name)) == ref) {
			keep = append(keep, e)
		}
	}
	d := *c
	d.RotateTwins = false // a candidate keeps the variant that failed, whatever its seed
	if name == RoundTripName {
		// A round-trip finding: the round trip alone, no executor.
		d.ReferenceOnly, d.Invariance = true, false
		return &d
	}
	d.RoundTrip = nil // an executor's finding does not need it
	if len(keep) > 0 {
		d.Executors = keep
	}
	return &d
}

// executorNamed returns c's executor named name, or nil.
func (c *Checker) executorNamed(name executor.Name) executor.Executor {
	for _, e := range c.Executors {
		if e.Name() == name {
			return e
		}
	}
	return nil
}

// CountStmts counts the statements of every function body of src, nested
// ones and the final return included (-1 if src does not parse as Go).
func CountStmts(src []byte) int {
	f, err := parser.ParseFile(token.NewFileSet(), "fuzz.rx", src, parser.SkipObjectResolution)
	if err != nil {
		return -1
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if _, ok := node.(ast.Stmt); ok {
			if _, block := node.(*ast.BlockStmt); !block {
				n++
			}
		}
		return true
	})
	return n
}

func checks(src []byte) bool {
	_, err := program.Parse("fuzz.rx", src)
	return err == nil
}

// canonical re-prints src the way every candidate is printed.
func canonical(src []byte) ([]byte, error) {
	out, n := applyEdit(src, nil, 0)
	if n < 0 || out == nil {
		return nil, fmt.Errorf("%w: cannot re-print the program", ErrProgram)
	}
	return out, nil
}

// header is a program's file-level directives.
type header struct {
	scenario    string
	batches     []int
	seed        uint64
	hasSeed     bool
	inputs      []program.Input
	tolerances  []program.Tolerance
	expectError string
}

func headerOf(f *program.File) *header {
	return &header{scenario: f.Scenario, batches: append([]int(nil), f.Batches...), seed: f.Seed, hasSeed: f.HasSeed,
		inputs: f.Inputs, tolerances: f.Tolerances, expectError: f.ExpectError}
}

// text prints the directives that still refer to something in file.
func (h *header) text(file *ast.File) string {
	params, results := map[string]bool{}, map[string]bool{}
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			for _, fl := range []*ast.FieldList{fd.Type.Params, fd.Type.Results} {
				if fl == nil {
					continue
				}
				for _, field := range fl.List {
					for _, n := range field.Names {
						if fl == fd.Type.Params {
							params[n.Name] = true
						} else {
							results[n.Name] = true
						}
					}
				}
			}
		}
	}
	var b strings.Builder
	if h.scenario != "" {
		fmt.Fprintf(&b, "//rx:scenario %s\n", h.scenario)
	}
	if len(h.batches) > 0 {
		s := make([]string, len(h.batches))
		for i, n := range h.batches {
			s[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(&b, "//rx:batches %s\n", strings.Join(s, " "))
	}
	if h.hasSeed {
		fmt.Fprintf(&b, "//rx:seed %d\n", h.seed)
	}
	for _, in := range h.inputs {
		if params[in.Param] {
			fmt.Fprintf(&b, "//rx:input %s %s\n", in.Param, in.Dist)
		}
	}
	for _, t := range h.tolerances {
		if results[t.Output] {
			fmt.Fprintf(&b, "//rx:tolerance %s rtol=%s atol=%s\n", t.Output,
				strconv.FormatFloat(t.RTol, 'g', -1, 64), strconv.FormatFloat(t.ATol, 'g', -1, 64))
		}
	}
	if h.expectError != "" {
		fmt.Fprintf(&b, "//rx:expect-error %s\n", strconv.Quote(h.expectError))
	}
	return b.String()
}

// applyEdit parses src, applies the k-th edit of pass (none when pass is
// nil) and prints the result. It returns the number of edits pass has on
// src (-1 when src cannot be parsed) and nil bytes when k is out of range.
func applyEdit(src []byte, pass passFunc, k int) ([]byte, int) {
	pf, err := program.Parse("fuzz.rx", src)
	if err != nil {
		return nil, -1
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "fuzz.rx", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, -1
	}
	h := headerOf(pf)
	n := 0
	if pass != nil {
		edits := pass(file, h)
		n = len(edits)
		if k >= n {
			return nil, n
		}
		edits[k]()
	}
	var buf bytes.Buffer
	buf.WriteString(h.text(file))
	if err := printer.Fprint(&buf, fset, file); err != nil {
		return nil, n
	}
	out, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, n
	}
	return out, n
}

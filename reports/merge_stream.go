package reports

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// Source is one shard report for PlanMerge: its name, which errors
// quote, and how to open it. A merge opens each source once per pass
// (twice in all, three times for reports of older versions, and once
// more to name a case that is in the wrong shard), so it must give the
// same report every time.
type Source struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// FileSource is the Source of the report in the file at path.
func FileSource(path string) Source {
	return Source{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// MergeSummary is what the merged report holds, as `rxeq merge` prints
// it: the cases by outcome (xpass counts as passed; xfail and skip as
// skipped; fail, error and anything else as failed) and the locks.
type MergeSummary struct {
	Reports                 int
	Cases                   int
	Passed, Failed, Skipped int
	Locks, LocksHeld        int
}

// MergePlan is a merge of shard reports that has been checked and
// counted, ready to be written (PlanMerge, then Write): the streamed form
// of Merge, for reports too large to hold. It holds the merged header,
// every lock, the counts of the JUnit suites and, per group, a few
// dozen bytes (the groups each report holds, and each suite's seed and
// tolerance properties); never a case beyond the one being read.
type MergePlan struct {
	srcs   []Source
	sorted bool   // merged by group (reports that say their shard); else source after source
	out    Report // the merged report without its cases; Locks in the merged order
	counts []int  // each source's number of cases
	suites junitSuites
	// contiguous: each scenario's cases come in one run in the merged
	// order, so that JUnit's suites can be written in one pass.
	contiguous bool
	sum        MergeSummary
}

// PlanMerge reads the shard reports srcs once, one case at a time, and
// checks them as Merge does, with the same errors (a source's own errors,
// those of ReadJSON, prefixed with its name), and one more: a report that
// says its shard must hold its groups in increasing order (as rxeq run
// writes them), so that the merged order is a merge of the reports'
// orders. It returns the plan of the merge, whose Write writes the
// merged JSON and JUnit reports: byte for byte those of Merge's report.
//
// Reports of older versions, which do not say their shard, are merged
// source after source, as Merge does; they cost memory per case (the
// key that finds a case held twice), and one more pass.
func PlanMerge(ctx context.Context, srcs ...Source) (*MergePlan, error) {
	if len(srcs) == 0 {
		return nil, fmt.Errorf("%w: no reports", ErrMerge)
	}
	p := &MergePlan{srcs: srcs}
	sharded, err := p.count(ctx, true)
	if err != nil {
		return nil, err
	}
	if !sharded {
		// Older reports keep the order of the files: count again in it,
		// so that the suites' times are summed in the merged order.
		if _, err := p.count(ctx, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Summary returns what the merged report holds.
func (p *MergePlan) Summary() MergeSummary { return p.sum }

// Report returns the merged report without its cases (Cases is nil): the
// header and the locks.
func (p *MergePlan) Report() *Report {
	r := p.out
	return &r
}

// count is PlanMerge's pass: it streams the sources' cases in the merged
// order (by group when sorted) and counts them, then checks the set as
// Merge does. sharded says the reports say their shard (when false, with
// no error, the counts are of the sorted order and must be redone).
func (p *MergePlan) count(ctx context.Context, sorted bool) (sharded bool, err error) {
	n := len(p.srcs)
	p.sorted = sorted
	p.counts = make([]int, n)
	p.suites = junitSuites{}
	p.contiguous = true
	p.sum = MergeSummary{Reports: n}
	groups := make([][]int, n)   // each source's groups, in its order, each once per run of cases
	orderErr := make([]error, n) // a report's first group out of order
	dupErr := make([]error, n)   // a report's first case that another (or it) holds before
	keys := map[string]int{}     // case key -> source, within the current group (sorted) or the run
	curGroup := -1
	var lastScenario string
	var cur *suiteStats
	res, err := p.stream(ctx, sorted, true, func(i int, c *Case) error {
		p.counts[i]++
		if g := groups[i]; len(g) == 0 || g[len(g)-1] != c.Group {
			if len(g) > 0 && c.Group < g[len(g)-1] && orderErr[i] == nil {
				orderErr[i] = fmt.Errorf("%w: report %d holds case %s/%s of group %d after a case of group %d: a shard's cases must come in the run's order, as rxeq run writes them",
					ErrMerge, i+1, c.Scenario, c.Name(), c.Group, g[len(g)-1])
			}
			groups[i] = append(g, c.Group)
		}
		if sorted && c.Group != curGroup {
			clear(keys)
			curGroup = c.Group
		}
		k := c.Scenario + "\x00" + c.Name()
		if w, dup := keys[k]; dup {
			if dupErr[i] == nil {
				dupErr[i] = fmt.Errorf("%w: case %s/%s is in report %d and in report %d: were they sharded the same way?", ErrMerge, c.Scenario, c.Name(), w+1, i+1)
			}
			return nil // not merged, as Merge drops it
		}
		keys[k] = i
		if cur == nil || c.Scenario != lastScenario {
			if _, seen := p.suites.index[c.Scenario]; seen {
				p.contiguous = false
			}
			cur, lastScenario = p.suites.suite(c.Scenario), c.Scenario
		}
		cur.addCase(c)
		p.sum.Cases++
		switch c.Status {
		case StatusPass, StatusXPass:
			p.sum.Passed++
		case StatusSkip, StatusXFail:
			p.sum.Skipped++
		default:
			p.sum.Failed++
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// The header and the locks, as Merger builds them.
	var m Merger
	for i, r := range res {
		m.begin()
		for j := range r.locks {
			m.addLock(&r.locks[j])
		}
		m.errs[i] = dupErr[i]
		head := r.head
		m.end(i, &head)
	}
	for _, h := range m.heads {
		sharded = sharded || h.Shard != nil
	}
	if !sharded && sorted {
		return false, nil
	}
	stray := func(i int, sh *Shard) error {
		for _, g := range groups[i] {
			if !sh.holds(g) {
				return p.strayCase(ctx, i, sh, g)
			}
		}
		return nil
	}
	if err := checkShards(m.heads, stray); err != nil {
		return sharded, err
	}
	for _, err := range m.errs {
		if err != nil {
			return sharded, err
		}
	}
	if sharded {
		for _, err := range orderErr {
			if err != nil {
				return sharded, err
			}
		}
	}
	p.out = m.out
	p.out.Schema, p.out.Cases = Schema, nil
	if sh := m.heads[0].Shard; sh != nil {
		p.out.Shard = &Shard{Index: 1, Total: 1, Groups: sh.Groups}
		slices.SortStableFunc(p.out.Locks, func(a, b Lock) int { return cmp.Compare(a.Group, b.Group) })
	}
	for i := range p.out.Locks {
		l := &p.out.Locks[i]
		p.suites.suite(l.Scenario).addLock(l)
		p.sum.Locks++
		if l.Status == StatusPass {
			p.sum.LocksHeld++
		}
	}
	return sharded, nil
}

// errFound stops the search of strayCase.
var errFound = errors.New("found")

// strayCase reads source i again for the first case of group g, which is
// not in shard sh, and returns the error that names it.
func (p *MergePlan) strayCase(ctx context.Context, i int, sh *Shard, g int) error {
	var found *Case
	_, err := p.readSource(ctx, i, func(c *Case) error {
		if c.Group == g {
			found = c
			return errFound
		}
		return nil
	}, nil)
	if found == nil {
		if err == nil {
			err = fmt.Errorf("%w: %s changed while it was merged", ErrMerge, p.srcs[i].Name)
		}
		return err
	}
	return strayCase(i, sh, found)
}

// readSource decodes source i, calling onCase with each case and onLock
// (when not nil) with each lock; errors of the source's own are prefixed
// with its name.
func (p *MergePlan) readSource(ctx context.Context, i int, onCase func(*Case) error, onLock func(*Lock) error) (Report, error) {
	if onLock == nil {
		onLock = func(*Lock) error { return ctx.Err() }
	}
	rc, err := p.srcs[i].Open()
	if err != nil {
		return Report{}, err
	}
	defer rc.Close()
	var cbErr error
	head, err := decodeReport(rc, func(c *Case) error {
		if cbErr = onCase(c); cbErr == nil {
			cbErr = ctx.Err()
		}
		return cbErr
	}, func(l *Lock) error {
		cbErr = onLock(l)
		return cbErr
	})
	if err != nil && (cbErr == nil || !errors.Is(err, cbErr)) {
		err = fmt.Errorf("%s: %w", p.srcs[i].Name, err)
	}
	return head, err
}

// sourceResult is what a stream read from one source besides its cases.
type sourceResult struct {
	head  Report
	locks []Lock
	err   error
}

// stream reads every source at once and calls fn with each case (and
// the index of its source) in the merged order: by group when sorted
// (each source's cases in its own order; a tie goes to the earlier
// source), else source after source. keepLocks keeps each source's
// locks in its result. The first error, fn's, the context's or that of
// the first source (in order) that cannot be read, ends it.
func (p *MergePlan) stream(parent context.Context, sorted, keepLocks bool, fn func(i int, c *Case) error) ([]sourceResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	n := len(p.srcs)
	res := make([]sourceResult, n)
	chans := make([]chan *Case, n)
	var wg sync.WaitGroup
	for i := range p.srcs {
		ch := make(chan *Case, 16)
		chans[i] = ch
		wg.Go(func() {
			defer close(ch)
			var onLock func(*Lock) error
			if keepLocks {
				onLock = func(l *Lock) error {
					res[i].locks = append(res[i].locks, *l)
					return nil
				}
			}
			res[i].head, res[i].err = p.readSource(ctx, i, func(c *Case) error {
				select {
				case ch <- c:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}, onLock)
		})
	}
	fnErr := func() error {
		if !sorted {
			for i, ch := range chans {
				for c := range ch {
					if err := fn(i, c); err != nil {
						return err
					}
				}
			}
			return nil
		}
		next := make([]*Case, n)
		for i, ch := range chans {
			next[i] = <-ch
		}
		for {
			at := -1
			for i, c := range next {
				if c != nil && (at < 0 || c.Group < next[at].Group) {
					at = i
				}
			}
			if at < 0 {
				return nil
			}
			if err := fn(at, next[at]); err != nil {
				return err
			}
			next[at] = <-chans[at]
		}
	}()
	cancel()
	for _, ch := range chans {
		for range ch { // let every reader see the end and return
		}
	}
	wg.Wait()
	if fnErr != nil {
		return nil, fnErr
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	for _, r := range res {
		if r.err != nil {
			return nil, r.err
		}
	}
	return res, nil
}

// Write writes the merged report as JSON to jsonW and as JUnit XML to
// junitW (either may be nil), byte for byte what WriteJSON and
// WriteJUnit write of Merge's report, reading the sources once more, one
// case at a time (and once per scenario for JUnit in the rare merge
// where a scenario's cases are not all together). A source that changed
// since PlanMerge is an error wrapping ErrMerge.
func (p *MergePlan) Write(ctx context.Context, jsonW, junitW io.Writer) error {
	var jw *junitWriter
	var open *suiteStats // the JUnit suite being written
	inPass := junitW != nil && p.contiguous
	if inPass {
		var err error
		if jw, err = newJUnitWriter(junitW, &p.out, &p.suites); err != nil {
			return err
		}
	}
	// closeSuite writes the open suite's locks and closes it.
	closeSuite := func() error {
		if open == nil {
			return nil
		}
		for i := range p.out.Locks {
			if l := &p.out.Locks[i]; l.Scenario == open.name {
				if err := jw.testLock(l); err != nil {
					return err
				}
			}
		}
		open = nil
		return jw.endSuite()
	}
	cases := func(yield func(any) error) error {
		counts := make([]int, len(p.srcs))
		_, err := p.stream(ctx, p.sorted, false, func(i int, c *Case) error {
			counts[i]++
			if inPass {
				if open == nil || open.name != c.Scenario {
					if err := closeSuite(); err != nil {
						return err
					}
					open = p.suites.index[c.Scenario]
					if open == nil {
						return fmt.Errorf("%w: %s changed while it was merged", ErrMerge, p.srcs[i].Name)
					}
					if err := jw.startSuite(&p.out, open); err != nil {
						return err
					}
				}
				if err := jw.testCase(c); err != nil {
					return err
				}
			}
			if yield != nil {
				return yield(c)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, n := range counts {
			if n != p.counts[i] {
				return fmt.Errorf("%w: %s changed while it was merged (%d cases, then %d)", ErrMerge, p.srcs[i].Name, p.counts[i], n)
			}
		}
		return nil
	}
	var err error
	if jsonW != nil {
		err = writeJSON(jsonW, &p.out, []jsonList{
			{"cases", false, cases},
			{"locks", false, func(yield func(any) error) error {
				for i := range p.out.Locks {
					if err := yield(&p.out.Locks[i]); err != nil {
						return err
					}
				}
				return nil
			}},
		})
	} else if inPass {
		err = cases(nil)
	}
	if err != nil {
		return err
	}
	switch {
	case inPass:
		if err := closeSuite(); err != nil {
			return err
		}
		// Suites of locks alone come after those with cases.
		for _, s := range p.suites.list {
			if !s.withCases {
				open = s
				if err := jw.startSuite(&p.out, s); err != nil {
					return err
				}
				if err := closeSuite(); err != nil {
					return err
				}
			}
		}
		return jw.finish()
	case junitW != nil:
		return p.writeJUnitBySuite(ctx, junitW)
	}
	return nil
}

// writeJUnitBySuite writes the JUnit report with one pass over the
// sources per suite, for a merge whose scenarios interleave.
func (p *MergePlan) writeJUnitBySuite(ctx context.Context, w io.Writer) error {
	jw, err := newJUnitWriter(w, &p.out, &p.suites)
	if err != nil {
		return err
	}
	for _, s := range p.suites.list {
		if err := jw.startSuite(&p.out, s); err != nil {
			return err
		}
		if s.withCases {
			_, err := p.stream(ctx, p.sorted, false, func(_ int, c *Case) error {
				if c.Scenario != s.name {
					return nil
				}
				return jw.testCase(c)
			})
			if err != nil {
				return err
			}
		}
		for i := range p.out.Locks {
			if l := &p.out.Locks[i]; l.Scenario == s.name {
				if err := jw.testLock(l); err != nil {
					return err
				}
			}
		}
		if err := jw.endSuite(); err != nil {
			return err
		}
	}
	return jw.finish()
}

package reports

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrMerge is the kind of every error Merge returns.
var ErrMerge = errors.New("cannot merge reports")

// Merge joins the reports of the shards of one run (rxeq run --shard i/n,
// one report per shard) into the report the unsharded run would have
// written: every case once, in the unsharded run's order (by Case.Group);
// every lock once (a lock that several shards checked keeps its worst
// status: fail over error over pass), in the same order; the longest
// duration, since shards run side by side. The shards must come from the
// same run: the same schema, tool version and seed. A case that two
// reports both hold means they were not shards of one run, and is an
// error naming it.
//
// Reports that say which shard they hold (Report.Shard, written by this
// version) must make up the whole run: the same total and group count,
// each shard 1…Total exactly once — a missing shard is an error naming it
// ("shard 2/3 is missing") — and each case in the shard its group belongs
// to. Reports of older versions, which do not say, cannot be checked and
// cannot be mixed with those that do.
func Merge(shards ...*Report) (*Report, error) {
	var m Merger
	for _, r := range shards {
		m.Add(r)
	}
	return m.Report()
}

// Merger joins shard reports as Merge does, one report at a time: Add
// takes a report in memory, ReadJSON decodes one from its JSON case by
// case straight into the merged report, so that merging files costs the
// merged report and not a decoded copy of every input besides. The zero
// Merger is ready to use; after ReadJSON fails it must not be used
// again. To merge reports without holding the merged one (`rxeq
// merge`), use PlanMerge.
type Merger struct {
	out   Report
	heads []*Report      // each report's header; Cases is set by Report
	spans [][2]int       // each report's cases in out.Cases
	errs  []error        // each report's first error of its own (seed, version, a case twice)
	cases map[string]int // case key -> index of the report that holds it
	locks map[string]int // lock key -> index in out.Locks
	nils  map[int]bool   // reports that were nil
}

// begin starts report number len(m.heads) and returns its index.
func (m *Merger) begin() int {
	if m.cases == nil {
		m.cases, m.locks, m.nils = map[string]int{}, map[string]int{}, map[int]bool{}
		m.out.Cases, m.out.Locks = []Case{}, []Lock{}
	}
	i := len(m.heads)
	m.heads = append(m.heads, nil)
	m.spans = append(m.spans, [2]int{len(m.out.Cases), len(m.out.Cases)})
	m.errs = append(m.errs, nil)
	return i
}

// addCase adds a case of report i.
func (m *Merger) addCase(i int, c *Case) {
	k := c.Scenario + "\x00" + c.Name()
	if w, dup := m.cases[k]; dup {
		if m.errs[i] == nil {
			m.errs[i] = fmt.Errorf("%w: case %s/%s is in report %d and in report %d: were they sharded the same way?", ErrMerge, c.Scenario, c.Name(), w+1, i+1)
		}
		return
	}
	m.cases[k] = i
	m.out.Cases = append(m.out.Cases, *c)
	m.spans[i][1] = len(m.out.Cases)
}

// addLock adds a lock of a report: once, at its worst status.
func (m *Merger) addLock(l *Lock) {
	k := l.Scenario + "\x00" + l.Function
	if at, seen := m.locks[k]; seen {
		if rank(l.Status) > rank(m.out.Locks[at].Status) {
			m.out.Locks[at] = *l
		}
		return
	}
	m.locks[k] = len(m.out.Locks)
	m.out.Locks = append(m.out.Locks, *l)
}

// end finishes report i, whose other fields are in head.
func (m *Merger) end(i int, head *Report) {
	head.Cases, head.Locks = nil, nil
	m.heads[i] = head
	if head.Schema != "" && head.Schema != Schema {
		m.errs[i] = fmt.Errorf("%w: report %d: %w %q", ErrMerge, i+1, ErrSchema, head.Schema)
		return
	}
	if i == 0 {
		m.out.ToolVersion, m.out.Compiler, m.out.Seed = head.ToolVersion, head.Compiler, head.Seed
	} else {
		first := m.heads[0]
		if first == nil {
			first = &Report{}
		}
		switch {
		case head.Seed != first.Seed:
			m.errs[i] = fmt.Errorf("%w: report %d has seed %d, report 1 seed %d: not shards of one run", ErrMerge, i+1, head.Seed, first.Seed)
		case head.ToolVersion != first.ToolVersion:
			m.errs[i] = fmt.Errorf("%w: report %d was written by rxeq %s, report 1 by %s", ErrMerge, i+1, head.ToolVersion, first.ToolVersion)
		}
		if m.out.Compiler == "" {
			m.out.Compiler = head.Compiler
		}
	}
	m.out.Duration = max(m.out.Duration, head.Duration)
	m.out.Inputs = append(m.out.Inputs, head.Inputs...)
	// What ran the cases: every shard ran the same executors on the same
	// kind of machine, but one shard may have run none of torch's cases
	// (or of another executor's), so the merged report takes each
	// framework and each unavailable executor from the first shard that
	// names it.
	if m.out.Framework == "" {
		m.out.Framework = head.Framework
	}
	for name, v := range head.Frameworks {
		if _, ok := m.out.Frameworks[name]; !ok {
			if m.out.Frameworks == nil {
				m.out.Frameworks = map[string]string{}
			}
			m.out.Frameworks[name] = v
		}
	}
	for _, u := range head.Unavailable {
		if !slices.ContainsFunc(m.out.Unavailable, func(v Unavailable) bool { return v.Executor == u.Executor }) {
			m.out.Unavailable = append(m.out.Unavailable, u)
		}
	}
}

// Add adds a report held in memory.
func (m *Merger) Add(r *Report) {
	i := m.begin()
	if r == nil {
		m.nils[i] = true
		m.heads[i] = &Report{}
		return
	}
	for j := range r.Cases {
		m.addCase(i, &r.Cases[j])
	}
	for j := range r.Locks {
		m.addLock(&r.Locks[j])
	}
	head := *r
	m.end(i, &head)
}

// Report returns the merged report, or the first reason the reports do
// not make up one run (see Merge). Call it once, after the last report.
func (m *Merger) Report() (*Report, error) {
	if len(m.heads) == 0 {
		return nil, fmt.Errorf("%w: no reports", ErrMerge)
	}
	for i := range m.heads {
		if m.nils[i] {
			return nil, fmt.Errorf("%w: report %d is nil", ErrMerge, i+1)
		}
		// A view of the report's cases in the merged list, for the checks.
		m.heads[i].Cases = m.out.Cases[m.spans[i][0]:m.spans[i][1]:m.spans[i][1]]
	}
	stray := func(i int, sh *Shard) error {
		for j := range m.heads[i].Cases {
			if c := &m.heads[i].Cases[j]; !sh.holds(c.Group) {
				return strayCase(i, sh, c)
			}
		}
		return nil
	}
	if err := checkShards(m.heads, stray); err != nil {
		return nil, err
	}
	for _, err := range m.errs {
		if err != nil {
			return nil, err
		}
	}
	out := m.out
	out.Schema = Schema
	if sh := m.heads[0].Shard; sh != nil {
		out.Shard = &Shard{Index: 1, Total: 1, Groups: sh.Groups}
		// A group is in one shard, and a shard's cases come in the
		// run's order: a stable sort by group is the unsharded order.
		slices.SortStableFunc(out.Cases, func(a, b Case) int { return cmp.Compare(a.Group, b.Group) })
		slices.SortStableFunc(out.Locks, func(a, b Lock) int { return cmp.Compare(a.Group, b.Group) })
	}
	return &out, nil
}

// holds says whether group g of the run is in shard sh.
func (sh *Shard) holds(g int) bool { return g >= 0 && g < sh.Groups && g%sh.Total == sh.Index-1 }

// strayCase is the error for case c of report i, which is not in the
// shard sh the report holds.
func strayCase(i int, sh *Shard, c *Case) error {
	return fmt.Errorf("%w: report %d (shard %d/%d) holds case %s/%s of group %d, which is not in that shard of %d groups",
		ErrMerge, i+1, sh.Index, sh.Total, c.Scenario, c.Name(), c.Group, sh.Groups)
}

// checkShards checks that reports which say their shard make up one whole
// run (see Merge); stray returns the error for the first case of report i
// that is not in shard sh (strayCase), or nil.
func checkShards(shards []*Report, stray func(i int, sh *Shard) error) error {
	var with, without []int
	for i, r := range shards {
		if r == nil {
			return fmt.Errorf("%w: report %d is nil", ErrMerge, i+1)
		}
		if r.Shard == nil {
			without = append(without, i+1)
		} else {
			with = append(with, i+1)
		}
	}
	if len(with) == 0 {
		return nil
	}
	if len(without) > 0 {
		return fmt.Errorf("%w: report %d says which shard it holds, report %d does not (written by an older rxeq?): merge reports of one version", ErrMerge, with[0], without[0])
	}
	first := shards[0].Shard
	if first.Total < 1 || first.Groups < 0 {
		return fmt.Errorf("%w: report 1 claims shard %d/%d of %d groups", ErrMerge, first.Index, first.Total, first.Groups)
	}
	seen := make(map[int]int, first.Total) // shard index -> report
	for i, r := range shards {
		sh := r.Shard
		if sh.Total != first.Total || sh.Groups != first.Groups {
			return fmt.Errorf("%w: report %d is shard %d/%d of a run of %d groups, report 1 shard %d/%d of %d groups: not shards of one run",
				ErrMerge, i+1, sh.Index, sh.Total, sh.Groups, first.Index, first.Total, first.Groups)
		}
		if sh.Index < 1 || sh.Index > sh.Total {
			return fmt.Errorf("%w: report %d claims shard %d/%d", ErrMerge, i+1, sh.Index, sh.Total)
		}
		if j, dup := seen[sh.Index]; dup {
			return fmt.Errorf("%w: reports %d and %d are both shard %d/%d", ErrMerge, j, i+1, sh.Index, sh.Total)
		}
		seen[sh.Index] = i + 1
		if err := stray(i, sh); err != nil {
			return err
		}
	}
	var missing []string
	for k := 1; k <= first.Total; k++ {
		if _, ok := seen[k]; !ok && k-1 < first.Groups { // a shard beyond the group count holds nothing
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Total))
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Errorf("%w: shard %s is missing: its cases are in no report", ErrMerge, missing[0])
	case len(missing) > 1:
		return fmt.Errorf("%w: shards %s are missing: their cases are in no report", ErrMerge, strings.Join(missing, ", "))
	}
	return nil
}

// rank orders statuses from best to worst for Merge.
func rank(s Status) int {
	switch s {
	case StatusPass, StatusXPass:
		return 0
	case StatusSkip, StatusXFail:
		return 1
	case StatusError:
		return 2
	}
	return 3
}

// ReadJSON reads one report written by WriteJSON and adds it, decoding
// its cases and locks one at a time into the merged report: a report's
// cases are never held twice. Its errors are ReadJSON's (the package
// function): a report that is not JSON, or of another schema, is refused
// with the same texts. After an error the Merger must not be used.
func (m *Merger) ReadJSON(r io.Reader) error {
	i := m.begin()
	head, err := decodeReport(r, func(c *Case) error {
		m.addCase(i, c)
		return nil
	}, func(l *Lock) error {
		m.addLock(l)
		return nil
	})
	if err != nil {
		return err
	}
	m.end(i, &head)
	return nil
}

// decodeReport reads one report written by WriteJSON, calling onCase with
// each case and onLock with each lock as they are decoded (each a new
// value the callee may keep), and returns the rest of the report, its
// header. Its errors are ReadJSON's (the package function), with the same
// texts, or the first error of onCase or onLock, as it is.
func decodeReport(r io.Reader, onCase func(*Case) error, onLock func(*Lock) error) (Report, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	var head Report
	var typeErr error // the first value of the wrong type: decoding goes on, as json.Unmarshal does
	var cbErr error   // onCase's or onLock's
	keep := func(err error) error {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if typeErr == nil {
				typeErr = err
			}
			return nil
		}
		return err
	}
	err := func() error {
		if err := expectDelim(dec, '{', "the report"); err != nil {
			return err // not an object: nothing of it can be read
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			switch key {
			case "cases":
				err = eachElem(dec, key, func() error {
					c := new(Case)
					if err := keep(dec.Decode(c)); err != nil {
						return err
					}
					cbErr = onCase(c)
					return cbErr
				})
			case "locks":
				err = eachElem(dec, key, func() error {
					l := new(Lock)
					if err := keep(dec.Decode(l)); err != nil {
						return err
					}
					cbErr = onLock(l)
					return cbErr
				})
			default:
				// A field of the header: decoded into head by its JSON name,
				// so the header's fields are Report's, unknown ones ignored.
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				one, _ := json.Marshal(map[string]json.RawMessage{key: raw})
				err = json.Unmarshal(one, &head)
			}
			if cbErr != nil {
				return cbErr
			}
			if err := keep(err); err != nil {
				return err
			}
		}
		_, err := dec.Token() // the closing brace
		return err
	}()
	var syn *json.SyntaxError
	switch {
	case cbErr != nil:
		return head, cbErr
	case err != nil && (errors.As(err, &syn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return head, fmt.Errorf("reports: decoding JSON: %w", err)
	case head.Schema == "":
		return head, fmt.Errorf("reports: %w: the report has no \"schema\" field (want %q)", ErrSchema, Schema)
	case head.Schema != Schema:
		return head, fmt.Errorf("reports: %w %q: this version of rxeq reads %q", ErrSchema, head.Schema, Schema)
	case err != nil:
		return head, fmt.Errorf("reports: decoding %s: %w", Schema, err)
	case typeErr != nil:
		return head, fmt.Errorf("reports: decoding %s: %w", Schema, typeErr)
	}
	return head, nil
}

// expectDelim reads the delimiter want, which opens what.
func expectDelim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return &json.UnmarshalTypeError{Value: fmt.Sprint(tok), Field: what, Offset: dec.InputOffset()}
	}
	return nil
}

// eachElem calls elem to decode each element of the JSON list the field
// key holds (null is an empty list).
func eachElem(dec *json.Decoder, key string, elem func() error) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		// Not a list: skip the value, whatever it is, and say so.
		if d, ok := tok.(json.Delim); ok && d == '{' {
			for depth := 1; depth > 0; {
				t, err := dec.Token()
				if err != nil {
					return err
				}
				switch t {
				case json.Delim('{'), json.Delim('['):
					depth++
				case json.Delim('}'), json.Delim(']'):
					depth--
				}
			}
		}
		return &json.UnmarshalTypeError{Value: "not a list", Field: key, Offset: dec.InputOffset()}
	}
	for dec.More() {
		if err := elem(); err != nil {
			return err
		}
	}
	_, err = dec.Token() // ']'
	return err
}

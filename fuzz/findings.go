package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/ledger"
)

// RecordSchema is the schema string of finding.json.
const RecordSchema = "rxeq.finding/v1"

// The statuses of a Record and of a ledger entry's check.
const (
	// StatusNew: no ledger entry matches the finding: a failure.
	StatusNew = "new"
	// StatusXFail: a ledger entry matches (a finding), or the entry's
	// program still fails (a ledger check): expected.
	StatusXFail = "xfail"
	// StatusXPass: a ledger entry's program no longer fails.
	StatusXPass = "xpass"
)

// maxSeeds bounds Record.Seeds.
const maxSeeds = 20

// Record is one distinct finding, saved as finding.json in its directory
// DIR/<ID>/. Findings with the same Key are merged into one Record.
type Record struct {
	Schema string `json:"schema"`
	ID     string `json:"id"`
	// Key is the dedup key (DedupKey): executor, version, category, value
	// class and the ops of the reduced program.
	Key       string `json:"key"`
	Executor  string `json:"executor"`
	Reference string `json:"reference"`
	Framework string `json:"framework,omitempty"`
	Version   string `json:"version,omitempty"`
	// Category is the finding's category: CatSemantics when a ledger
	// entry matched it, else Observed.
	Category Category `json:"category"`
	// Observed is the category the comparison gave, before the ledger.
	Observed Category `json:"observed"`
	Status   string   `json:"status"`
	// Ledger and LedgerText name the matching entry and its text.
	Ledger     string   `json:"ledger,omitempty"`
	LedgerText string   `json:"ledger_text,omitempty"`
	Kind       Kind     `json:"kind"`
	Ops        []string `json:"ops"`
	Values     string   `json:"values,omitempty"`
	Shape      string   `json:"shape,omitempty"`
	Func       string   `json:"func,omitempty"`
	Output     string   `json:"output,omitempty"`
	Detail     string   `json:"detail"`
	// Statements counts the reduced program's statements.
	Statements int `json:"statements"`
	// Count is how many programs raised this finding (over every
	// campaign that saved into the directory); Seeds the first of them.
	Count int      `json:"count"`
	Seeds []uint64 `json:"seeds"`
	// Original and Reduced are the file names of the first program and
	// its reduction, Repro the standalone reproducer's ("" when none).
	Original string `json:"original"`
	Reduced  string `json:"reduced"`
	Repro    string `json:"repro,omitempty"`
	// Rerun and CheckCmd are the commands of Campaign.Commands.
	Rerun    string `json:"rerun,omitempty"`
	CheckCmd string `json:"check,omitempty"`
}

// NewRecord classifies finding f, whose reduced program is small, and
// matches it against l (nil: no ledger). framework and version name what
// ran behind f.Executor.
func NewRecord(f Finding, small []byte, framework, version string, l *ledger.Ledger) *Record {
	cat := f.Category()
	ops := ProgramOps(small)
	if ops == nil {
		ops = []string{}
	}
	key := DedupKey(string(f.Executor), version, cat, f.Values, ops)
	r := &Record{Schema: RecordSchema, ID: KeyID(string(f.Executor), cat, key), Key: key,
		Executor: string(f.Executor), Reference: string(f.Reference), Framework: framework, Version: version,
		Category: cat, Observed: cat, Status: StatusNew, Kind: f.Kind, Ops: ops, Values: f.Values, Shape: f.Shape,
		Func: f.Func, Output: f.Output, Detail: f.Detail, Statements: CountStmts(small)}
	if e := l.Match(ledger.Case{Executor: r.Executor, Version: version, Category: string(cat), Ops: ops, Values: f.Values, Output: f.Output, Error: f.GotError}); e != nil {
		r.Category, r.Status, r.Ledger, r.LedgerText = CatSemantics, StatusXFail, e.ID, e.Text()
	}
	return r
}

// record classifies the finding of o, and saves it in a new directory or
// merges it into the one of its key. It returns the record and the lines
// that announce it.
func (c *Campaign) record(recs map[string]*Record, o outcome) (*Record, string, error) {
	f := o.found.f
	var framework, version string
	if c.Framework != nil {
		framework, version = c.Framework(f.Executor, f.Framework)
	}
	rec := NewRecord(f, o.found.small, framework, version, c.Ledger)
	head := fmt.Sprintf("FOUND seed %d: %s\n", o.seed, firstLine(f.String()))
	if rec.Status == StatusXFail {
		head = fmt.Sprintf("XFAIL seed %d: %s\n  known: %s\n", o.seed, firstLine(f.String()), rec.LedgerText)
	}
	dir := filepath.Join(c.Dir, rec.ID)
	if old, ok := recs[rec.ID]; ok {
		old.merge(o.seed)
		if err := old.write(dir); err != nil {
			return nil, "", err
		}
		return old, head + fmt.Sprintf("  same as %s (%d programs)\n", dir, old.Count), nil
	}
	if old, err := readRecord(dir); err == nil && old.Key == rec.Key {
		// Saved by an earlier campaign: counted, not saved again.
		old.merge(o.seed)
		recs[rec.ID] = old
		if err := old.write(dir); err != nil {
			return nil, "", err
		}
		return old, head + fmt.Sprintf("  same as %s (%d programs)\n", dir, old.Count), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("saving seed %d: %w", o.seed, err)
	}
	base := filepath.Join(dir, fmt.Sprintf("seed-%d", o.seed))
	orig := c.header(o.seed, f, base+".rx", "") + string(o.src)
	red := c.header(o.seed, f, base+".reduced.rx", o.found.note) + string(o.found.small)
	if err := os.WriteFile(base+".rx", []byte(orig), 0o644); err != nil {
		return nil, "", fmt.Errorf("saving seed %d: %w", o.seed, err)
	}
	if err := os.WriteFile(base+".reduced.rx", []byte(red), 0o644); err != nil {
		return nil, "", fmt.Errorf("saving seed %d: %w", o.seed, err)
	}
	rec.Original, rec.Reduced = filepath.Base(base)+".rx", filepath.Base(base)+".reduced.rx"
	if c.Commands != nil {
		rec.Rerun, rec.CheckCmd = c.Commands(o.seed, f, base+".reduced.rx")
	}
	rec.merge(o.seed)
	extra := ""
	if f.Executor == RoundTripName {
		// A round-trip finding: the commands that export and import the
		// reduced program's function and check the round trip again.
		if err := os.WriteFile(filepath.Join(dir, "repro.sh"), RoundTripRepro(rec), 0o755); err != nil {
			return nil, "", fmt.Errorf("saving seed %d: %w", o.seed, err)
		}
		rec.Repro = "repro.sh"
		extra = fmt.Sprintf("  reproducer %s\n", filepath.Join(dir, "repro.sh"))
	} else if name, b := c.reproFile(o.found.small, f); b != nil {
		// A generated-code executor's finding (pytorch, torchscript,
		// numpy; tfjs-cpu, tfjs-wasm) or ONNX Runtime's (onnxruntime,
		// onnxruntime-noopt): the standalone repro.py of pyexport.Repro
		// or ortrepro.Repro, or repro.js of jsexport.Repro.
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, "", fmt.Errorf("saving seed %d: %w", o.seed, err)
		}
		rec.Repro = name
		extra = fmt.Sprintf("  reproducer %s\n", filepath.Join(dir, name))
	} else if c.Repro != nil {
		name, err := c.Repro(dir, rec, o.found.small)
		switch {
		case err != nil:
			extra = fmt.Sprintf("  no reproducer: %v\n", err)
		case name != "":
			rec.Repro = name
			extra = fmt.Sprintf("  reproducer %s\n", filepath.Join(dir, name))
		}
	}
	if err := rec.write(dir); err != nil {
		return nil, "", err
	}
	recs[rec.ID] = rec
	return rec, head + fmt.Sprintf("  saved %s.rx and %s.reduced.rx (%s)\n", base, base, o.found.note) + extra, nil
}

func (r *Record) merge(seed uint64) {
	r.Count++
	if len(r.Seeds) < maxSeeds && !slices.Contains(r.Seeds, seed) {
		r.Seeds = append(r.Seeds, seed)
	}
}

func (r *Record) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "finding.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("saving finding %s: %w", r.ID, err)
	}
	return nil
}

// readRecord reads dir/finding.json.
func readRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, "finding.json"))
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "finding.json"), err)
	}
	return &r, nil
}

// ReadRecords reads every DIR/*/finding.json, sorted by ID.
func ReadRecords(dir string) ([]*Record, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Record
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		r, err := readRecord(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// TableRow is one line of the findings table: the distinct findings and
// the programs that raised them, for one executor and category.
type TableRow struct {
	Executor string   `json:"executor"`
	Category Category `json:"category"`
	Distinct int      `json:"distinct"`
	Programs int      `json:"programs"`
	XFail    int      `json:"xfail"` // distinct findings a ledger entry matched
}

// Table groups records by executor and category (in the order of
// Categories), executors sorted by name.
func Table(recs []*Record) []TableRow {
	idx := map[[2]string]*TableRow{}
	var rows []*TableRow
	for _, r := range recs {
		k := [2]string{r.Executor, string(r.Category)}
		row, ok := idx[k]
		if !ok {
			row = &TableRow{Executor: r.Executor, Category: r.Category}
			idx[k] = row
			rows = append(rows, row)
		}
		row.Distinct++
		row.Programs += r.Count
		if r.Status == StatusXFail {
			row.XFail++
		}
	}
	slices.SortFunc(rows, func(a, b *TableRow) int {
		if a.Executor != b.Executor {
			return strings.Compare(a.Executor, b.Executor)
		}
		return slices.Index(Categories, a.Category) - slices.Index(Categories, b.Category)
	})
	out := make([]TableRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out
}

// WriteTable prints the table of recs: one line per executor and category
// with the distinct findings, the programs that raised them and how many
// of the findings the ledger knows; then one line per distinct finding.
func WriteTable(w io.Writer, recs []*Record) {
	if len(recs) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EXECUTOR\tCATEGORY\tFINDINGS\tPROGRAMS\tXFAIL")
	for _, r := range Table(recs) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", r.Executor, r.Category, r.Distinct, r.Programs, r.XFail)
	}
	_ = tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tOPS\tVALUES\tPROGRAMS\tLEDGER")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Status, strings.Join(r.Ops, ","), cmpOr(r.Values, "-"), r.Count, cmpOr(r.Ledger, "-"))
	}
	_ = tw.Flush()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// LedgerCheck is the outcome of running one ledger entry's program.
type LedgerCheck struct {
	Entry  string `json:"entry"`
	Status string `json:"status"` // StatusXFail (still fails) or StatusXPass
	Detail string `json:"detail,omitempty"`
	Text   string `json:"text"`
}

// FrameworkFunc names the framework and its version behind executor
// name ("libtorch (ATen)", "1.13.1"; "" and "" for rxeq's own executors),
// given what the executor's prepared program said runs it (reported:
// executor.FrameworkOf, "" when nothing was prepared yet or it said
// nothing). The ledger's version ranges are matched against version.
type FrameworkFunc func(name executor.Name, reported string) (framework, version string)

// CheckLedger runs the program of every entry of l whose executor c
// compares (and whose version range holds the executor's version) and
// reports whether the entry's discrepancy still shows: StatusXFail when
// the executor still disagrees on it, StatusXPass when it no longer does.
// An entry whose range the version the executor reports when it runs the
// program does not hold is left out, like one whose executor c does not
// compare. read returns an entry's program (ledger.DefaultProgram for the
// embedded ledger).
func CheckLedger(ctx context.Context, c *Checker, l *ledger.Ledger, framework FrameworkFunc,
	read func(name string) ([]byte, error)) ([]LedgerCheck, error) {
	if l == nil {
		return nil, nil
	}
	// One slot for every entry: an executor in a worker process (native
	// code, ONNX Runtime) keeps one worker for all the entries' programs
	// instead of starting one (and loading its runtime) per entry.
	sc, slots := c.Slot("")
	defer slots.Close()
	var out []LedgerCheck
	for i := range l.Entries {
		e := &l.Entries[i]
		var ex executor.Executor
		for _, x := range sc.Executors {
			if string(x.Name()) == e.Executor {
				ex = x
			}
		}
		if ex == nil || e.Program == "" {
			continue
		}
		if framework != nil {
			if _, v := framework(ex.Name(), ""); !e.InRange(v) {
				continue
			}
		}
		src, err := read(e.Program)
		if err != nil {
			return out, fmt.Errorf("ledger entry %s: %w", e.ID, err)
		}
		one := *sc
		one.Executors = []executor.Executor{ex}
		one.Metamorphic = 0
		one.RoundTrip, one.ReferenceOnly = nil, false // the entry's executor alone
		one.Invariance = e.Category == string(CatPosition)
		rep, err := one.Check(ctx, src)
		if err != nil {
			return out, fmt.Errorf("ledger entry %s: %w", e.ID, err)
		}
		if framework != nil {
			if _, v := framework(ex.Name(), rep.Frameworks[ex.Name()]); !e.InRange(v) {
				continue
			}
		}
		lc := LedgerCheck{Entry: e.ID, Status: StatusXPass, Text: e.Text()}
		if !rep.OK() {
			lc.Status, lc.Detail = StatusXFail, firstLine(rep.Findings[0].String())
		}
		out = append(out, lc)
	}
	return out, nil
}

package fuzz

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/onnx/ortrepro"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/pyexport"
)

// DefaultChunk is how many consecutive programs a goroutine of a Campaign
// takes at once: their native code (and their variants') is built by one
// compiler run into one library (Checker.Prebuild). Measured on two cores
// with tcc: 8 programs and their variants in one build cost about a third
// of the compile time of one build each; larger chunks win little more.
const DefaultChunk = 8

// A Campaign generates programs from consecutive seeds, checks them,
// and reduces and saves every program that raises a finding: the loop
// behind `rxeq fuzz`. Program i (from 0) is Generate(Seed+i, Config).
//
// Programs are checked on Parallel goroutines, a chunk of Chunk
// consecutive programs at a time, but their results are taken in seed
// order: what Run writes, the files it saves and its Stats do not depend
// on scheduling (with Time set, how many programs finish does).
//
// Each goroutine checks with a slot of the Checker (Checker.Slot): an
// executor that is an executor.Slotter (native code in a worker process)
// keeps one worker for all the goroutine's programs.
type Campaign struct {
	// Seed is the seed of the first program.
	Seed uint64
	// Count is how many programs to check; 0 means no bound (Time or the
	// context ends the campaign).
	Count int
	// Time bounds the campaign's wall time: no program is started after
	// it has passed. 0 means no bound.
	Time time.Duration
	// Config is the generator's.
	Config Config
	// Checker checks every program; it is not modified. Required.
	Checker *Checker
	// Reducer bounds the reduction of each finding.
	Reducer Reducer
	// Dir is the directory the findings are saved in (made when the
	// first is saved), one directory DIR/<id>/ per distinct finding (see
	// Record and DedupKey): seed-N.rx, the program as generated, and
	// seed-N.reduced.rx, the reduced one, each after a header that names
	// the finding (see Commands), finding.json (the Record) and, when
	// Repro writes one, a standalone reproducer. A finding whose key was
	// seen before, in this campaign or one that saved into Dir earlier,
	// is merged into its directory (Record.Count, Record.Seeds) rather
	// than saved again.
	Dir string
	// Ledger, when not nil, is the known-discrepancy ledger: a finding
	// an entry matches is recorded with status xfail and category
	// semantics (see Record).
	Ledger *ledger.Ledger
	// Framework, when not nil, names the framework and its version behind
	// an executor ("libtorch (ATen)", "1.13.1"), "" for rxeq's own.
	Framework FrameworkFunc
	// Repro, when not nil, writes a standalone reproducer of a new
	// finding into its directory dir and returns the file's name ("" when
	// it wrote none); an error is reported and does not stop the
	// campaign.
	Repro func(dir string, rec *Record, reduced []byte) (string, error)
	// Commands, when not nil, returns the two commands a reproducer's
	// header names: rerun, which draws program seed again and checks it,
	// and check, which checks the saved file (file is the path of
	// seed-N.rx or seed-N.reduced.rx). f is the finding saved. Only the
	// caller knows the flags that rebuild its Checker and Config.
	Commands func(seed uint64, f Finding, file string) (rerun, check string)
	// Parallel is how many programs are checked at once; 0 means 1.
	Parallel int
	// Chunk is how many consecutive programs a goroutine takes at once,
	// prebuilt together (Checker.Prebuild); 0 means DefaultChunk.
	Chunk int
	// SlotDirs, when not "", is a directory in which each goroutine's
	// slot builds its programs, in a directory of its own that is emptied
	// after each chunk (nothing builds there between chunks, loaded
	// libraries stay mapped, and a long campaign does not fill a tmpfs at
	// some 80 KB per program). "" builds where the executors build.
	SlotDirs string
	// NoSlots checks every program with the Checker itself rather than a
	// slot of it per goroutine: a worker process per program, the
	// behaviour slots must not change (for tests and benchmarks).
	NoSlots bool
	// Found receives, for each finding in seed order, the lines that
	// announce it ("FOUND seed N: …" and where it was saved); nil
	// discards them.
	Found io.Writer
	// Progress receives the progress of the campaign and the programs
	// that did not check (a generator bug, reported and skipped); nil
	// discards them. With Terminal, the progress is one line rewritten
	// after every program and erased at the end; otherwise a line every
	// 100 programs.
	Progress io.Writer
	// Terminal says Progress is a terminal.
	Terminal bool
}

// Stats is what a Campaign did.
type Stats struct {
	Programs int // programs checked (those that did not check or were cut short by cancellation not counted)
	Findings int // programs with a finding
	// Excused counts the output elements within float32 rounding noise
	// (Report.Excused), over all programs.
	Excused    int
	FirstFound uint64        // seed of the first program with a finding (0 when none)
	Elapsed    time.Duration // wall time of the campaign
	// Records are the distinct findings of the campaign, in the order
	// they were first found; XFail counts the programs whose finding a
	// ledger entry matched (they are in Findings too).
	Records []*Record
	XFail   int
}

// New counts the programs whose finding no ledger entry matched.
func (s Stats) New() int { return s.Findings - s.XFail }

// outcome is what one program of a campaign gave.
type outcome struct {
	i         int  // the program's index: its seed is Seed + i
	checked   bool // the program checked and ran (else msg says why not)
	cancelled bool // ctx ended while it ran: it does not count
	rep       *Report
	msg       string // why the program did not check
	err       error  // the finding could not be saved: the campaign stops
	src       []byte // the program
	seed      uint64
	found     *reduced // the reduced finding, when rep is not OK
}

// reduced is a finding reduced by a worker of the campaign, recorded in
// seed order by Run.
type reduced struct {
	f     Finding
	small []byte
	note  string
}

// Run generates, checks, reduces and saves until Count programs ran,
// Time passed or ctx ended. The error is ctx's when it ended (the Stats
// count the programs that finished), or why a finding could not be
// saved, which stops the campaign; findings are not errors.
func (c *Campaign) Run(ctx context.Context) (Stats, error) {
	parent := ctx
	start := time.Now()
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	found, progress := c.Found, c.Progress
	if found == nil {
		found = io.Discard
	}
	if progress == nil {
		progress = io.Discard
	}

	var mu sync.Mutex
	next := 0
	// take hands out the next chunk of program indices [lo, hi).
	take := func() (lo, hi int, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || (c.Count > 0 && next >= c.Count) || (c.Time > 0 && time.Since(start) >= c.Time) {
			return 0, 0, false
		}
		lo, hi = next, next+cmp.Or(c.Chunk, DefaultChunk)
		if c.Count > 0 {
			hi = min(hi, c.Count)
		}
		next = hi
		return lo, hi, true
	}
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range max(c.Parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chk, wipe := c.Checker, func() {}
			if !c.NoSlots {
				dir := ""
				if c.SlotDirs != "" {
					if d, err := os.MkdirTemp(c.SlotDirs, "slot-"); err == nil {
						dir = d
						wipe = func() { wipeDir(d) }
					}
				}
				var slot io.Closer
				chk, slot = c.Checker.Slot(dir)
				defer slot.Close()
			}
			for lo, hi, ok := take(); ok; lo, hi, ok = take() {
				progs := make([]Program, 0, hi-lo)
				srcs := make([][]byte, 0, hi-lo)
				for i := lo; i < hi; i++ {
					p := Generate(c.Seed+uint64(i), c.Config)
					progs = append(progs, p)
					srcs = append(srcs, p.Source)
				}
				// One build of the chunk's programs (and their variants)
				// per native executor; a failure only means each program
				// builds alone.
				_ = chk.Prebuild(ctx, srcs)
				for k, p := range progs {
					results <- c.one(ctx, chk, lo+k, p)
				}
				wipe()
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	var st Stats
	var fatal error
	recs := map[string]*Record{}
	apply := func(o outcome) {
		switch {
		case o.cancelled:
		case o.err != nil:
			if fatal == nil {
				fatal = o.err
				cancel()
			}
		case !o.checked:
			// A generated program that does not check is a generator bug:
			// report it and go on.
			fmt.Fprintf(progress, "\r%s\n", o.msg)
		default:
			st.Programs++
			st.Excused += o.rep.Excused
			if !o.rep.OK() {
				rec, msg, err := c.record(recs, o)
				if err != nil {
					if fatal == nil {
						fatal = err
						cancel()
					}
					return
				}
				if st.Findings == 0 {
					st.FirstFound = c.Seed + uint64(o.i)
				}
				st.Findings++
				if !slices.Contains(st.Records, rec) {
					st.Records = append(st.Records, rec)
				}
				if rec.Status == StatusXFail {
					st.XFail++
				}
				fmt.Fprint(found, msg)
			}
			c.progress(progress, st, time.Since(start))
		}
	}
	pending := map[int]outcome{}
	want := 0
	for o := range results {
		pending[o.i] = o
		for o, ok := pending[want]; ok; o, ok = pending[want] {
			delete(pending, want)
			want++
			apply(o)
		}
	}
	if c.Terminal {
		fmt.Fprint(progress, "\r\033[K")
	}
	st.Elapsed = time.Since(start)
	switch {
	case fatal != nil:
		return st, fatal
	case parent.Err() != nil:
		return st, parent.Err()
	}
	return st, nil
}

// wipeDir removes what dir holds, keeping dir itself.
func wipeDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// one checks program i (p) with chk and, when it disagrees, reduces and
// saves it.
func (c *Campaign) one(ctx context.Context, chk *Checker, i int, p Program) outcome {
	rep, err := chk.Check(ctx, p.Source)
	switch {
	case ctx.Err() != nil:
		return outcome{i: i, cancelled: true}
	case errors.Is(err, executor.ErrByName):
		return outcome{i: i, err: err} // the same for every program: stop
	case err != nil:
		return outcome{i: i, msg: fmt.Sprintf("seed %d: %v", p.Seed, err)}
	}
	o := outcome{i: i, checked: true, rep: rep, src: p.Source, seed: p.Seed}
	if !rep.OK() {
		f := rep.Findings[0]
		rc := ReduceChecker(f, chk, c.Checker)
		small, stats, rerr := c.Reducer.ReduceFinding(ctx, p.Source, f, rc)
		if ctx.Err() != nil {
			return outcome{i: i, cancelled: true}
		}
		if !bytes.Equal(small, p.Source) {
			f = Reclassify(ctx, small, f, rc)
		}
		note := ReduceNote(p.Source, small, stats)
		if rerr != nil {
			note += fmt.Sprintf("; reduction stopped: %v", rerr)
		}
		o.found = &reduced{f: f, small: small, note: note}
	}
	return o
}

func (c *Campaign) progress(w io.Writer, st Stats, d time.Duration) {
	rate := float64(st.Programs) / max(d.Seconds(), 1e-9)
	if c.Terminal {
		fmt.Fprintf(w, "\r\033[K%d programs, %d findings, %.1f programs/s", st.Programs, st.Findings, rate)
		return
	}
	if st.Programs%100 == 0 {
		fmt.Fprintf(w, "%d programs, %d findings, %.1f programs/s\n", st.Programs, st.Findings, rate)
	}
}

// repro returns a standalone repro.py (pyexport.Repro) of finding f on
// the reduced program src, when f is a case of a generated-code executor
// (pytorch, torchscript, numpy), a repro.py of ortrepro.Repro for
// onnxruntime and onnxruntime-noopt, or a repro.js (jsexport.Repro) for
// tfjs-cpu and tfjs-wasm (reproFile names which): the inputs are the
// ones the checker generated for that function and batch. nil otherwise,
// or when the reduced program no longer gives the case.
func (c *Campaign) repro(src []byte, f Finding) []byte {
	_, b := c.reproFile(src, f)
	return b
}

// reproFile is repro with the reproducer's file name: repro.py or
// repro.js.
func (c *Campaign) reproFile(src []byte, f Finding) (string, []byte) {
	_, py := pyexport.FormatOf(f.Executor)
	if !py && !jsexport.IsExecutor(f.Executor) && !ortrepro.IsExecutor(f.Executor) || f.Func == "" {
		return "", nil
	}
	file, err := program.Parse("fuzz.rx", src)
	if err != nil {
		return "", nil
	}
	p, err := program.Lower(file)
	fn := file.Func(f.Func)
	if err != nil || fn == nil {
		return "", nil
	}
	batch := max(f.Batch, 1)
	seed := uint64(harness.DefaultScenarioSeed)
	if file.HasSeed {
		seed = file.Seed
	}
	inputs, err := harness.GenerateInputs(file, fn, batch, seed, nil)
	if err != nil {
		return "", nil
	}
	tol := DefaultTolerance()
	if c.Checker != nil && c.Checker.Tolerance != nil {
		tol = *c.Checker.Tolerance
	}
	o := pyexport.ReproOptions{Executor: f.Executor, Func: f.Func, Inputs: inputs, Source: "fuzz.rx"}
	signed := c.Checker != nil && c.Checker.SignedZeros
	tols := compare.Tolerances(file, fn, tol)
	for _, t := range tols {
		o.RTol, o.ATol = max(o.RTol, t.RTol), max(o.ATol, t.ATol)
		signed = signed || t.SignedZeros
	}
	if ortrepro.IsExecutor(f.Executor) {
		// A crash may not come every time (the script's child process
		// makes reads of uninitialised memory repeatable, not every
		// crash): a few runs before it says the crash is gone.
		attempts := 1
		if f.Crashed {
			attempts = 3
		}
		b, err := ortrepro.Repro(p, ortrepro.Options{Options: o, Tolerances: tols, SignedZeros: signed, Attempts: attempts})
		if err != nil {
			return "", nil
		}
		return "repro.py", b
	}
	if !py {
		b, err := jsexport.Repro(p, jsexport.ReproOptions{Executor: f.Executor, Func: f.Func, Inputs: inputs, RTol: o.RTol, ATol: o.ATol, Source: o.Source})
		if err != nil {
			return "", nil
		}
		return "repro.js", b
	}
	b, err := pyexport.Repro(p, o)
	if err != nil {
		return "", nil
	}
	return "repro.py", b
}

// header is the comment block a reproducer of finding f, saved as file,
// starts with: the seed, the signature, the finding, the note (when not
// ""), and the commands of c.Commands.
func (c *Campaign) header(seed uint64, f Finding, file, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// rxeq fuzz finding, seed %d\n", seed)
	sig := f.Signature()
	fmt.Fprintf(&b, "// signature: %s vs %s, %s", sig.Executor, sig.Reference, sig.Kind)
	if sig.Func != "" {
		fmt.Fprintf(&b, " in %s", sig.Func)
	}
	if sig.PanicOrPrepareText != "" {
		fmt.Fprintf(&b, ", %q", sig.PanicOrPrepareText)
	}
	if sig.Output != "" {
		fmt.Fprintf(&b, ", output %s", sig.Output)
	}
	if sig.RefKind != "" || sig.GotKind != "" {
		fmt.Fprintf(&b, ", errors %q vs %q", sig.RefKind, sig.GotKind)
	}
	b.WriteString("\n")
	for _, l := range strings.Split(strings.TrimRight(f.String(), "\n"), "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	if note != "" {
		fmt.Fprintf(&b, "// %s\n", note)
	}
	if c.Commands != nil {
		rerun, check := c.Commands(seed, f, file)
		fmt.Fprintf(&b, "// rerun: %s\n", rerun)
		fmt.Fprintf(&b, "// check this file: %s\n", check)
	}
	b.WriteString("\n")
	return b.String()
}

// ReduceNote says in one line how the reduction of from to to went:
// "reduced from N to M statements (T candidates, K tested, 1.2s)".
func ReduceNote(from, to []byte, st ReduceStats) string {
	return fmt.Sprintf("reduced from %d to %d statements (%d candidates, %d tested, %s)",
		CountStmts(from), CountStmts(to), st.Tries, st.Tested, st.Elapsed.Round(time.Millisecond))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Slot returns a copy of c for one goroutine of a campaign: each of its
// Executors that is an executor.Slotter (native code in a worker process)
// is replaced by a slot of its own (executor.SlotOf), a worker reused by
// every program the copy checks, building into buildDir when that is not
// "". A variant that must give its twin's bits (executor.Twin: native-avx2,
// native-sse2, native-c, native-tiled) and can share its twin's slot
// (executor.SlotSharer) runs in the twin's slot instead of one of its own:
// one worker then prepares each program once for native and its variants.
// Closing the io.Closer releases the slots; c is not modified.
func (c *Checker) Slot(buildDir string) (*Checker, io.Closer) {
	own := *c
	own.Executors = slices.Clone(c.Executors)
	var slots closers
	shared := make([]bool, len(own.Executors))
	for i, e := range own.Executors {
		if sharesSlot(e, c.Executors) {
			shared[i] = true
			continue
		}
		var cl io.Closer
		own.Executors[i], cl = executor.SlotOf(e, buildDir)
		slots = append(slots, cl)
	}
	for i, e := range own.Executors {
		if !shared[i] {
			continue
		}
		j := slices.IndexFunc(c.Executors, func(o executor.Executor) bool { return o.Name() == executor.TwinOf(e) })
		if s, ok := e.(executor.SlotSharer).ShareSlot(own.Executors[j]); ok {
			own.Executors[i] = s
			continue
		}
		var cl io.Closer
		own.Executors[i], cl = executor.SlotOf(e, buildDir)
		slots = append(slots, cl)
	}
	return &own, slots
}

// sharesSlot reports whether e is a variant whose twin is among execs and
// that may run in the twin's slot (executor.SlotSharer).
func sharesSlot(e executor.Executor, execs []executor.Executor) bool {
	if _, ok := e.(executor.SlotSharer); !ok {
		return false
	}
	t := executor.TwinOf(e)
	return t != "" && slices.ContainsFunc(execs, func(o executor.Executor) bool { return o.Name() == t && executor.TwinOf(o) == "" })
}

// closers closes each of its io.Closers, returning the first error.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

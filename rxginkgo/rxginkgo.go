// Package rxginkgo turns rxeq scenarios into ginkgo table entries and
// gives gomega matchers for outputs within tolerance, for a source lock and
// for a whole harness result, so a user's suite is a few lines:
//
//	var _ = Describe("my scorers", func() {
//		rxginkgo.Table("agree across executors", "testdata/scorers")
//	})
//
// Table is DescribeTable over Entries with AssertCase as the body; use
// Entries directly to add entries of your own or another body.
//
// Each entry is one (scenario, function, batch) run through one executor
// against the oracle: the fallback interpreter, the forced-native backend
// and, when libtorch is installed, the torch executor (the same C over ATen
// kernels), or the executors of the options given. Its labels say what it
// runs ("oracle" and the executor's name, and "native" for every executor
// that needs a C compiler), so --label-filter='!native' runs the entries
// that need none. The function's source lock is checked in every entry
// of the function (generating C needs no compiler, and the check takes
// microseconds), so no --label-filter or --focus can leave a broken lock
// out of a run that runs any of the function's entries. An entry's
// location is the function's line in its .rx file; a failure message
// starts with a file:line and the case's name (once): the //rx:tolerance
// line whose bound the first failing output broke, else the function's
// line; then each failing output's bound, and the harness's mismatch
// report or the lock's near-miss text. (Ginkgo takes a failure's
// own location from the Go stack, which has no frame in a .rx file: it is
// the line of rxginkgo that asserts, never reflect's.) A file that does
// not check becomes one failing entry at its first error's file:line:col,
// not a panic of the container. Without libtorch the torch entries are
// skipped with the reason (and fail when RXEQ_REQUIRE_TORCH is set).
//
// With harness.Options.Inputs (EntriesWith, TableWith), a function whose
// .npy files fix its batch gets one entry per batch of data instead of
// its //rx:batches, and runs on those files; a function whose files
// cannot be used is one failing entry that names the file.
package rxginkgo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
)

// RequireTorchEnv names the environment variable that, when set (CI sets
// it where libtorch is installed), makes AssertCase fail a case whose run
// left torch out instead of only recording why.
const RequireTorchEnv = "RXEQ_REQUIRE_TORCH"

// Case is the parameter of one table entry: one function of one scenario
// at one batch size.
type Case struct {
	File     *program.File
	Function string
	Batch    int
	// Options are passed to harness.Run (Batches and Progress are set by
	// AssertCase). The zero value runs the built-in executors (torch among
	// them when libtorch is installed).
	Options harness.Options
	// Executor, when set, names the one executor of the case (the entries
	// of Entries each have one); Options.Executors then holds just it.
	Executor executor.Name
	// Err is set for the entry of a file that does not check (or cannot
	// be read), or of a function whose input files (Options.Inputs)
	// cannot be used: AssertCase fails with it.
	Err error
	// declared is where Table or TableWith (declaredBy) was called, for
	// the failure message; zero for a table of the user's own.
	declared   types.CodeLocation
	declaredBy string
	// Unavailable is set for the entry of an executor that cannot run
	// here (torch without libtorch; native and torch in a build without
	// cgo): AssertCase skips with it, or fails when RXEQ_REQUIRE_TORCH is
	// set.
	Unavailable string
}

// String names the case "scenario/function/bBATCH", with "/EXECUTOR" when
// it runs one executor ("scenario/function: input files" for the entry of
// a function whose Options.Inputs files cannot be used).
func (c Case) String() string {
	if c.File == nil {
		if errors.Is(c.Err, harness.ErrInputs) {
			return "input files" // Options.Inputs holds no file for any function
		}
		if errors.Is(c.Err, scenarios.ErrDuplicate) {
			return "duplicate scenario names"
		}
		return "does not check"
	}
	if c.Err != nil {
		return fmt.Sprintf("%s/%s: input files", c.File.ScenarioName(), c.Function)
	}
	s := fmt.Sprintf("%s/%s/b%d", c.File.ScenarioName(), c.Function, c.Batch)
	if c.Executor != "" {
		s += "/" + string(c.Executor)
	}
	return s
}

// Entries returns one ginkgo TableEntry per (scenario, function, batch) of
// the given .rx files and directories (searched for *.rx), or of the
// built-in catalog when paths is empty. Entries whose function has
// //rx:lock lines also check the lock. Labels: "native" on every entry (the
// default executors include the native backend), and "torch" too when
// libtorch is installed (the default executors then include torch). In a
// build without cgo the native and torch entries are skipped with the
// reason (harness.NativeAvailable), never passed or failed.
func Entries(paths ...string) ([]ginkgo.TableEntry, error) {
	return EntriesWith(harness.Options{}, paths...)
}

// entries makes one entry per (scenario, function, batch, executor) of
// files, each running with opts and that one executor.
func entries(files []*program.File, opts harness.Options) []ginkgo.TableEntry {
	var out []ginkgo.TableEntry
	for _, e := range planEntries(files, opts) {
		out = append(out, ginkgo.Entry(e.c.String(), e.labels, e.at, e.c))
	}
	return out
}

// plannedEntry is one table entry before it becomes a ginkgo.TableEntry.
type plannedEntry struct {
	c      Case
	labels ginkgo.Labels
	at     types.CodeLocation
}

// planEntries lists the entries of files under opts: per function, batch
// and executor, with their labels and their location (the function's line
// in its .rx file).
func planEntries(files []*program.File, opts harness.Options) []plannedEntry {
	execs, unavailable := opts.Executors, opts.Unavailable
	if execs == nil {
		sel, err := builtin.Select(nil, builtin.Config{}.FromEnv(os.Getenv), nil)
		if err != nil {
			panic(fmt.Sprintf("rxginkgo: %v", err)) // the defaults are built in
		}
		execs, unavailable = sel.Executors, sel.Unavailable
	}
	var out []plannedEntry
	replayed := false // some function found a file under opts.Inputs
	for _, f := range files {
		batches := f.Batches
		if len(batches) == 0 {
			batches = []int{harness.DefaultBatch}
		}
		for _, fn := range f.Funcs {
			at := types.CodeLocation{FileName: fn.Pos.Filename, LineNumber: fn.Pos.Line}
			fnBatches, fnOpts, err := inputBatches(f, fn, batches, opts)
			if err != nil {
				out = append(out, plannedEntry{Case{File: f, Function: fn.Name, Err: err}, ginkgo.Label(string(executor.Oracle)), at})
				replayed = true // its failing entry says what is wrong
				continue
			}
			replayed = replayed || fnOpts.Inputs != ""
			for _, b := range fnBatches {
				for _, e := range execs {
					o := fnOpts
					o.Executors = []executor.Executor{e}
					o.Unavailable = nil
					// The lock is checked in every entry of the function:
					// checked in one entry only, a label filter or a focus
					// that leaves that entry out would pass a broken lock.
					c := Case{File: f, Function: fn.Name, Batch: b, Options: o, Executor: e.Name()}
					labels := ginkgo.Label(string(executor.Oracle), string(e.Name()))
					if executor.NeedsCompiler(e) {
						labels = ginkgo.Label(string(executor.Oracle), string(e.Name()), "native")
					}
					out = append(out, plannedEntry{c, labels, at})
				}
				for _, u := range unavailable {
					// Skipped, but its lock is checked all the same: a
					// filter that selects only these entries still sees a
					// broken lock.
					c := Case{File: f, Function: fn.Name, Batch: b, Executor: u.Executor, Unavailable: u.Reason,
						Options: harness.Options{SkipLocks: opts.SkipLocks}}
					out = append(out, plannedEntry{c, ginkgo.Label(string(executor.Oracle), string(u.Executor), "native"), at})
				}
			}
		}
	}
	if opts.Inputs != "" && !replayed {
		// As rxeq run: a directory (misspelt, missing, empty) where no
		// function finds a file is an error, not a silent run on
		// generated inputs.
		err := fmt.Errorf("%w: %s: no .npy file for any parameter of the functions run; the files are looked up as %s",
			harness.ErrInputs, opts.Inputs, strings.Join(harness.InputSearchPaths(opts.Inputs, "SCENARIO", "FUNCTION", "bN", "PARAM"), ", then "))
		at := types.CodeLocation{FileName: opts.Inputs, LineNumber: 1}
		out = append(out, plannedEntry{Case{Err: err}, ginkgo.Label(string(executor.Oracle)), at})
	}
	return out
}

// inputBatches returns the batches of fn's entries and the options they
// run with. Under Options.Inputs, a function whose files fix its batches
// runs at those (harness.InputGroups); one without any file runs at its
// //rx:batches on generated inputs, with Inputs cleared so that its
// one-function run does not fail for finding no file.
func inputBatches(f *program.File, fn *program.Func, batches []int, opts harness.Options) ([]int, harness.Options, error) {
	if opts.Inputs == "" {
		return batches, opts, nil
	}
	groups, err := harness.InputGroups(opts.Inputs, f, fn, opts.Dims)
	if err != nil {
		return nil, opts, err
	}
	if len(groups) == 0 {
		opts.Inputs = ""
		return batches, opts, nil
	}
	var out []int
	for _, g := range groups {
		if g.Batch == 0 {
			return batches, opts, nil
		}
		out = append(out, g.Batch)
	}
	return out, opts, nil
}

// badEntry is the failing entry of a file that cannot run: it does not
// check, cannot be read, or repeats another's scenario name.
type badEntry struct {
	name string
	at   types.CodeLocation
	c    Case
}

func (b badEntry) entry() ginkgo.TableEntry {
	return ginkgo.Entry(b.name, ginkgo.Label(string(executor.Oracle)), b.at, b.c)
}

// badFile is the entry of a file that does not check: it fails at the
// first error's position with every error.
func badFile(name string, err error) badEntry {
	at := types.CodeLocation{FileName: name, LineNumber: 1}
	var list program.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		at = types.CodeLocation{FileName: list[0].Pos.Filename, LineNumber: list[0].Pos.Line}
	}
	return badEntry{name + ": does not check", at, Case{Err: err}}
}

// MustEntries is Entries for use at suite construction: a path that cannot
// be expanded panics, which ginkgo reports; a file that does not check is a
// failing entry (see Entries).
func MustEntries(paths ...string) []ginkgo.TableEntry {
	out, err := Entries(paths...)
	if err != nil {
		panic(fmt.Sprintf("rxginkgo: %v", err))
	}
	return out
}

// Table declares a ginkgo DescribeTable named description with one entry
// per case of the given files and directories (the built-in catalog when
// none), each asserted with AssertCase. Call it inside a container (or at
// the top level of a test file, as `var _ = rxginkgo.Table(…)`).
func Table(description string, paths ...string) bool {
	args := []any{declaredBody(types.NewCodeLocation(1), "rxginkgo.Table")}
	for _, e := range MustEntries(paths...) {
		args = append(args, e)
	}
	return ginkgo.DescribeTable(description, args...)
}

// AssertCase is the body of a table built by Entries: it runs the case
// through the harness and expects every executor to agree with the oracle
// and the function's lock to hold. When an executor skipped the case (an
// external executor that does not serve the function), the spec is
// skipped with SkipReason after the others' checks, never passed.
func AssertCase(c Case) {
	ginkgo.GinkgoHelper()
	if c.Err != nil {
		// The error's own text, one file:line:col line per problem, not
		// gomega's dump of the error value.
		what := "the file does not check:\n"
		switch {
		case errors.Is(c.Err, harness.ErrInputs):
			what = "the input files cannot be used:\n"
		case errors.Is(c.Err, scenarios.ErrDuplicate):
			what = "the files cannot run together:\n"
		}
		gomega.Expect(c.Err).To(notFail(what))
		return
	}
	if c.Unavailable != "" {
		if msg := c.lockFailure(); msg != "" {
			gomega.Expect(errors.New(msg)).To(notFail(c.where() + "\n"))
		}
		if os.Getenv(RequireTorchEnv) != "" {
			ginkgo.Fail(fmt.Sprintf("executor %s is required (%s is set) but cannot run: %s", c.Executor, RequireTorchEnv, c.Unavailable))
		}
		ginkgo.Skip(fmt.Sprintf("executor %s cannot run here: %s", c.Executor, c.Unavailable))
	}
	res, err := Run(context.Background(), c)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	for _, u := range res.Unavailable {
		if os.Getenv(RequireTorchEnv) != "" {
			ginkgo.Fail(fmt.Sprintf("executor %s is required (%s is set) but cannot run: %s", u.Executor, RequireTorchEnv, u.Reason))
		}
		ginkgo.AddReportEntry("executor not run: "+string(u.Executor), u.Reason)
	}
	gomega.Expect(res).To(passCase(c))
	if why := SkipReason(res); why != "" {
		ginkgo.Skip(why)
	}
}

// declaredBody is the body of a table that Table or TableWith (what)
// declared at at: assertEntry with the declaration's line, which a
// failure message names, since no frame of the user's suite is on the
// stack when a table body runs.
func declaredBody(at types.CodeLocation, what string) func(Case) {
	return func(c Case) {
		c.declared, c.declaredBy = at, what
		assertEntry(c)
	}
}

// assertEntry is the body of the tables rxginkgo declares. Unlike
// AssertCase it is not a ginkgo helper: ginkgo calls a table body through
// reflect, and a failure location is always a Go stack frame, so without a
// frame of its own a failure would be located in reflect/value.go. The
// failure message starts with the function's file:line in its .rx file,
// which is also the entry's location.
func assertEntry(c Case) {
	AssertCase(c)
}

// where is the case's position for a failure message: the function's
// file:line in its .rx file and the case's name.
func (c Case) where() string {
	if c.File == nil {
		return c.String()
	}
	if fn := c.File.Func(c.Function); fn != nil {
		return fmt.Sprintf("%s:%d: %s", fn.Pos.Filename, fn.Pos.Line, c)
	}
	return c.String()
}

// passCase is Pass for the result of one case (Run): its failure message
// names the case once, on its first line, at the //rx:tolerance line
// that set the bound of the first output out of it (the function's line
// when the default bound failed, or for an error or a lock), then says
// which bound each failing output had and gives the harness's reports.
func passCase(c Case) gomegatypes.GomegaMatcher {
	return &matcher{
		negated: "expected the case to fail, but it passed and its lock held",
		match: func(actual any) (bool, string, error) {
			res, ok := actual.(*harness.Result)
			if !ok || res == nil {
				return false, "", fmt.Errorf("expected a non-nil *harness.Result, got %T", actual)
			}
			if res.OK() {
				return true, "", nil
			}
			return false, c.failure(res), nil
		},
	}
}

// failure is passCase's message for a failing res of c.
func (c Case) failure(res *harness.Result) string {
	fn := c.File.Func(c.Function)
	file, line := fn.Pos.Filename, fn.Pos.Line
	var b strings.Builder
	var bounds []string
	for _, rc := range res.Cases {
		if rc.Status == harness.StatusPass || rc.Status == harness.StatusSkip {
			continue
		}
		for _, o := range rc.Outputs {
			if o.OK {
				continue
			}
			if t := c.tolerance(o.Name); t != nil {
				if len(bounds) == 0 {
					file, line = t.Pos.Filename, t.Pos.Line
				}
				bounds = append(bounds, fmt.Sprintf("%s: bound set by the //rx:tolerance at %s:%d", o.Name, t.Pos.Filename, t.Pos.Line))
			} else if o.Problem == "" && isFloatResult(fn, o.Name) {
				bounds = append(bounds, fmt.Sprintf("%s: default bound (no //rx:tolerance for it)", o.Name))
			}
		}
	}
	fmt.Fprintf(&b, "%s:%d: %s", file, line, c)
	if file != fn.Pos.Filename || line != fn.Pos.Line {
		fmt.Fprintf(&b, " (function %s at %s:%d)", fn.Name, fn.Pos.Filename, fn.Pos.Line)
	}
	b.WriteString("\n")
	if c.declared.FileName != "" {
		fmt.Fprintf(&b, "  table: %s at %s:%d\n", c.declaredBy, c.declared.FileName, c.declared.LineNumber)
	}
	for _, l := range bounds {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	for _, rc := range res.Cases {
		if rc.Status == harness.StatusPass || rc.Status == harness.StatusSkip {
			continue
		}
		if rc.Name() != c.resultName() {
			fmt.Fprintf(&b, "%s %s:\n", strings.ToUpper(string(rc.Status)), rc.Name())
		} else if rc.Status != harness.StatusFail {
			fmt.Fprintf(&b, "%s:\n", strings.ToUpper(string(rc.Status)))
		}
		fmt.Fprintf(&b, "    %s\n", strings.ReplaceAll(rc.Message, "\n", "\n    "))
	}
	for _, l := range res.Locks {
		if !l.OK() {
			msg := l.Result.Message
			if l.Error != "" {
				msg = l.Error
			}
			fmt.Fprintf(&b, "LOCK %s/%s:\n    %s\n", l.Scenario, l.Function, strings.ReplaceAll(msg, "\n", "\n    "))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// isFloatResult reports whether fn has a float32 result called name.
func isFloatResult(fn *program.Func, name string) bool {
	for _, r := range fn.Results {
		if r.Name == name {
			return r.Type.DType == ir.Float32
		}
	}
	return false
}

// resultName is the name harness.Case.Name gives c's result.
func (c Case) resultName() string {
	return fmt.Sprintf("%s/%s/b%d/%s", c.File.ScenarioName(), c.Function, c.Batch, c.Executor)
}

// tolerance returns the //rx:tolerance directive that sets output's
// bound for c's executor (the last one naming it with for= that executor,
// else the last one without for=), or nil.
func (c Case) tolerance(output string) *program.Tolerance {
	var t *program.Tolerance
	named := false
	for i := range c.File.Tolerances {
		d := &c.File.Tolerances[i]
		if d.Output != output || !d.AppliesTo(string(c.Executor)) || (named && d.Executors == nil) {
			continue
		}
		t, named = d, d.Executors != nil
	}
	return t
}

// lockFailure checks the lock of c's function against the generated C
// (no compiler needed) unless c.Options.SkipLocks, and returns the
// failure text, or "" when it holds or the function has no lock lines.
func (c Case) lockFailure() string {
	fn := c.File.Func(c.Function)
	if c.Options.SkipLocks || fn == nil || len(fn.Locks) == 0 {
		return ""
	}
	only := *c.File
	only.Funcs = []*program.Func{fn}
	p, err := program.Lower(&only)
	var src []byte
	if err == nil {
		src, err = native.Generate(p)
	}
	if err != nil {
		return fmt.Sprintf("LOCK %s/%s:\n    no C to check the lock against: %v", c.File.ScenarioName(), fn.Name, err)
	}
	if res := lock.Check(src, native.CFuncName(fn.Name), fn.Locks); !res.OK {
		return fmt.Sprintf("LOCK %s/%s:\n    %s", c.File.ScenarioName(), fn.Name, strings.ReplaceAll(res.Message, "\n", "\n    "))
	}
	return ""
}

// notFail succeeds on a nil error; its failure message is prefix and the
// error's text.
func notFail(prefix string) gomegatypes.GomegaMatcher {
	return &matcher{
		negated: "expected an error",
		match: func(actual any) (bool, string, error) {
			if actual == nil {
				return true, "", nil
			}
			err, ok := actual.(error)
			if !ok {
				return false, "", fmt.Errorf("expected an error, got %T", actual)
			}
			return err == nil, prefix + err.Error(), nil
		},
	}
}

// Run runs one case: the function alone (other functions of its file are
// left out, so their locks and cases are not part of it) at its batch.
func Run(ctx context.Context, c Case) (*harness.Result, error) {
	if c.File == nil {
		return nil, fmt.Errorf("rxginkgo: a case without a file")
	}
	fn := c.File.Func(c.Function)
	if fn == nil {
		return nil, fmt.Errorf("rxginkgo: %s has no function %s", c.File.Name, c.Function)
	}
	only := *c.File
	only.Funcs = []*program.Func{fn}
	opts := c.Options
	opts.Batches = []int{c.Batch}
	return harness.Run(ctx, []*program.File{&only}, opts)
}

// load parses the files of paths (the catalog when none). A file that
// cannot be read or does not check is returned as a failing entry in bad.
func load(paths []string) (files []*program.File, bad []badEntry, err error) {
	if len(paths) == 0 {
		files, err := scenarios.Catalog()
		return files, nil, err
	}
	names, err := scenarios.Expand(paths)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		src, err := program.ReadFile(name)
		if err != nil {
			bad = append(bad, badFile(name, err))
			continue
		}
		f, err := program.ParseScenario(name, src)
		if err != nil {
			bad = append(bad, badFile(name, err))
			continue
		}
		files = append(files, f)
	}
	if err := scenarios.Unique(files); err != nil {
		// One failing entry, at the first file that repeats a name, and no
		// cases: rows nobody can tell apart would hide which file failed.
		at := types.CodeLocation{LineNumber: 1}
		seen := map[string]bool{}
		for _, f := range files {
			if seen[f.ScenarioName()] {
				at.FileName = f.Name
				break
			}
			seen[f.ScenarioName()] = true
		}
		return nil, append(bad, badEntry{"duplicate scenario names", at, Case{Err: err}}), nil
	}
	return files, bad, nil
}

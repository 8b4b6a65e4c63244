package rxginkgo

import (
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/harness"
)

// Executor returns an external executor (a program speaking
// rxeq.executor/v1, such as a PyTorch module behind
// python/rxeq_executor.py) from "NAME=COMMAND", the syntax of `rxeq run
// --executor`. Its process starts with the first case and serves every
// entry; stop it when the suite ends:
//
//	var pytorch = rxginkgo.MustExecutor("author-torch=/usr/bin/python3 python/rxeq_executor.py examples/python/torch_scoring.py")
//	var _ = AfterSuite(func() { pytorch.Close() })
//	var _ = Describe("my scorers", func() {
//		rxginkgo.TableWith("agree with my PyTorch code", rxginkgo.WithExecutors(pytorch), "testdata/scorers")
//	})
func Executor(spec string) (*external.Executor, error) {
	o, err := external.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return external.New(o)
}

// MustExecutor is Executor for use at suite construction: a bad spec
// panics, which ginkgo reports.
func MustExecutor(spec string) *external.Executor {
	e, err := Executor(spec)
	if err != nil {
		panic(fmt.Sprintf("rxginkgo: %v", err))
	}
	return e
}

// WithExecutors returns options that compare the default executors (those
// of Entries: fallback, native, and torch when libtorch is installed,
// builtin.Select under the environment's Config) and the given ones with
// the oracle. A default executor that cannot run here (torch without
// libtorch, native in a build without cgo) gets skipped entries with the
// reason; a default whose name one of execs takes is left to execs. To
// compare only your executors, use OnlyExecutors.
func WithExecutors(execs ...executor.Executor) harness.Options {
	sel, err := builtin.Select(nil, builtin.Config{}.FromEnv(os.Getenv), nil)
	if err != nil {
		panic(fmt.Sprintf("rxginkgo: %v", err)) // the defaults are built in
	}
	taken := map[executor.Name]bool{}
	for _, e := range execs {
		taken[e.Name()] = true
	}
	var opts harness.Options
	for _, e := range sel.Executors {
		if !taken[e.Name()] {
			opts.Executors = append(opts.Executors, e)
		}
	}
	for _, u := range sel.Unavailable {
		if !taken[u.Executor] {
			opts.Unavailable = append(opts.Unavailable, u)
		}
	}
	opts.Executors = append(opts.Executors, execs...)
	return opts
}

// OnlyExecutors returns options that compare just the given executors
// with the oracle: one entry per executor and case, none for the
// built-in ones. Use it beside a Table of the defaults, so that their
// entries are not declared twice:
//
//	rxginkgo.Table("agree across executors", "testdata/scorers")
//	rxginkgo.TableWith("agree with my code", rxginkgo.OnlyExecutors(mine), "testdata/scorers")
func OnlyExecutors(execs ...executor.Executor) harness.Options {
	return harness.Options{Executors: append([]executor.Executor{}, execs...)}
}

// EntriesWith is Entries whose cases run with opts (see Case.Options).
func EntriesWith(opts harness.Options, paths ...string) ([]ginkgo.TableEntry, error) {
	files, bad, err := load(paths)
	if err != nil {
		return nil, err
	}
	var out []ginkgo.TableEntry
	for _, b := range bad {
		out = append(out, b.entry())
	}
	return append(out, entries(files, opts)...), nil
}

// TableWith is Table whose cases run with opts, for example
// WithExecutors(an external executor).
func TableWith(description string, opts harness.Options, paths ...string) bool {
	es, err := EntriesWith(opts, paths...)
	if err != nil {
		panic(fmt.Sprintf("rxginkgo: %v", err))
	}
	args := []any{declaredBody(types.NewCodeLocation(1), "rxginkgo.TableWith")}
	for _, e := range es {
		args = append(args, e)
	}
	return ginkgo.DescribeTable(description, args...)
}

// SkipReason returns why res has skipped cases (an executor that does not
// serve a function), one line per case, or "" when none was skipped.
// AssertCase skips its spec with it, so an entry whose executor did not
// run is never reported as passed.
func SkipReason(res *harness.Result) string {
	var lines []string
	for _, c := range res.Cases {
		if c.Status == harness.StatusSkip {
			lines = append(lines, c.Name()+": "+c.Message)
		}
	}
	return strings.Join(lines, "\n")
}

package rxginkgo

import (
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2"

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

// WithExecutors returns options that compare the built-in fallback and
// native executors (builtin.Select under the environment's Config) and
// the given ones with the oracle. In a build without cgo native is
// reported as not run, with the reason.
func WithExecutors(execs ...executor.Executor) harness.Options {
	sel, err := builtin.Select([]executor.Name{executor.Fallback, executor.Native}, builtin.Config{}.FromEnv(os.Getenv), nil)
	if err != nil {
		panic(fmt.Sprintf("rxginkgo: %v", err)) // the two names are built in
	}
	return harness.Options{Executors: append(sel.Executors, execs...), Unavailable: sel.Unavailable}
}

// EntriesWith is Entries whose cases run with opts (see Case.Options).
func EntriesWith(opts harness.Options, paths ...string) ([]ginkgo.TableEntry, error) {
	files, bad, err := load(paths)
	if err != nil {
		return nil, err
	}
	return append(bad, entries(files, opts)...), nil
}

// TableWith is Table whose cases run with opts, for example
// WithExecutors(an external executor).
func TableWith(description string, opts harness.Options, paths ...string) bool {
	es, err := EntriesWith(opts, paths...)
	if err != nil {
		panic(fmt.Sprintf("rxginkgo: %v", err))
	}
	args := []any{assertEntry}
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

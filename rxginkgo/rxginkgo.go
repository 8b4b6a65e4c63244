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
// Each entry is one (scenario, function, batch) run through the oracle,
// the fallback interpreter, the forced-native backend and, when libtorch is
// installed, the torch executor (the same C over ATen kernels), with the
// function's source lock checked; a failure prints the harness's mismatch
// report or the lock's near-miss text. Without libtorch each entry records
// a report entry saying torch did not run and why (and fails when
// RXEQ_REQUIRE_TORCH is set).
package rxginkgo

import (
	"context"
	"fmt"
	"os"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
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
}

// String names the case "scenario/function/bBATCH".
func (c Case) String() string {
	return fmt.Sprintf("%s/%s/b%d", harness.ScenarioName(c.File), c.Function, c.Batch)
}

// Entries returns one ginkgo TableEntry per (scenario, function, batch) of
// the given .rx files and directories (searched for *.rx), or of the
// built-in catalog when paths is empty. Entries whose function has
// //rx:lock lines also check the lock. Labels: "native" on every entry (the
// default executors include the native backend), and "torch" too when
// libtorch is installed (the default executors then include torch).
func Entries(paths ...string) ([]ginkgo.TableEntry, error) {
	return EntriesWith(harness.Options{}, paths...)
}

// entries makes one entry per (scenario, function, batch) of files, each
// running with opts.
func entries(files []*program.File, opts harness.Options) []ginkgo.TableEntry {
	labels := ginkgo.Label("native")
	if harness.TorchAvailable() == nil {
		labels = ginkgo.Label("native", "torch")
	}
	var out []ginkgo.TableEntry
	for _, f := range files {
		batches := f.Batches
		if len(batches) == 0 {
			batches = []int{harness.DefaultBatch}
		}
		for _, fn := range f.Funcs {
			for _, b := range batches {
				c := Case{File: f, Function: fn.Name, Batch: b, Options: opts}
				out = append(out, ginkgo.Entry(c.String(), labels, c))
			}
		}
	}
	return out
}

// MustEntries is Entries for use at suite construction: a file that does
// not check panics with every file:line:col error, which ginkgo reports.
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
	args := []any{AssertCase}
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
	res, err := Run(context.Background(), c)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	for _, u := range res.Unavailable {
		if os.Getenv(RequireTorchEnv) != "" {
			ginkgo.Fail(fmt.Sprintf("executor %s is required (%s is set) but cannot run: %s", u.Executor, RequireTorchEnv, u.Reason))
		}
		ginkgo.AddReportEntry("executor not run: "+u.Executor, u.Reason)
	}
	gomega.Expect(res).To(Pass())
	if why := SkipReason(res); why != "" {
		ginkgo.Skip(why)
	}
}

// Run runs one case: the function alone (other functions of its file are
// left out, so their locks and cases are not part of it) at its batch.
func Run(ctx context.Context, c Case) (*harness.Result, error) {
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

func load(paths []string) ([]*program.File, error) {
	if len(paths) == 0 {
		return scenarios.Catalog()
	}
	names, err := scenarios.Expand(paths)
	if err != nil {
		return nil, err
	}
	var files []*program.File
	for _, name := range names {
		src, err := program.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := program.Parse(name, src)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

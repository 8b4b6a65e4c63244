package rxginkgo

import (
	"github.com/onsi/ginkgo/v2/types"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
)

// AssertEntry exposes the body of rxginkgo's own tables to the tests.
var AssertEntry = assertEntry

// PlannedCases returns the Case of each entry planEntries makes.
func PlannedCases(files []*program.File, opts harness.Options) []Case {
	var out []Case
	for _, e := range planEntries(files, opts) {
		out = append(out, e.c)
	}
	return out
}

// BadCases returns the Case of each failing entry that loading paths
// makes (a file that does not check, duplicate scenario names).
func BadCases(paths ...string) ([]Case, error) {
	_, bad, err := load(paths)
	var out []Case
	for _, b := range bad {
		out = append(out, b.c)
	}
	return out, err
}

// DeclaredBody exposes the body Table and TableWith declare, with the
// location of their call.
func DeclaredBody(at types.CodeLocation, what string) func(Case) { return declaredBody(at, what) }

//go:build !cgo

package rxginkgo_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/rxginkgo"
)

// In a build without cgo, the entries of native and torch carry the
// reason and AssertCase skips them; the others run. Run with
// RXEQ_REQUIRE_TORCH unset (it fails unavailable entries instead).
var _ = Describe("a build without cgo", func() {
	check := func(c rxginkgo.Case) {
		if c.Executor == "native" || c.Executor == "torch" {
			Expect(c.Unavailable).To(Equal(native.ErrUnavailable.Error()))
		} else {
			Expect(c.Unavailable).To(BeEmpty())
		}
		rxginkgo.AssertCase(c) // skips the native and torch entries
	}
	DescribeTable("skips the native and torch entries of the default executors with the reason", check,
		rxginkgo.MustEntries("../scenarios/rounds.rx"))
	es, err := rxginkgo.EntriesWith(rxginkgo.WithExecutors(), "../scenarios/rounds.rx")
	if err != nil {
		panic(err)
	}
	DescribeTable("skips the native entries of an explicit executor list with the reason", check, es)
})

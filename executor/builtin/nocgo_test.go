//go:build !cgo

package builtin_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/native"
)

var _ = Describe("a build without cgo", func() {
	reason := native.ErrUnavailable.Error()

	It("cannot run native or torch code, and says how to rebuild", func() {
		Expect(builtin.Available(executor.Native)).To(MatchError(native.ErrUnavailable))
		Expect(builtin.Available(executor.Torch)).To(MatchError(native.ErrUnavailable))
	})

	It("leaves native and torch out of the default set, naming both with the reason", func() {
		sel, err := builtin.Select(nil, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(Equal([]executor.Executor{fallback.Executor{}}))
		Expect(sel.Unavailable).To(Equal([]executor.Unavailable{{Executor: "native", Reason: reason}, {Executor: "torch", Reason: reason}}))
	})

	It("names only the unavailable executors asked for, in workers too", func() {
		sel, err := builtin.Select([]executor.Name{"fallback", "native"}, builtin.Config{Isolate: true}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(Equal([]executor.Executor{fallback.Executor{}}))
		Expect(sel.Unavailable).To(Equal([]executor.Unavailable{{Executor: "native", Reason: reason}}))
	})
})

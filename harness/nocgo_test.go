//go:build !cgo

package harness_test

import (
	"context"
	"errors"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/scenarios"
)

// In a build without cgo (CGO_ENABLED=0 go test) the specs labelled
// native, which compile and call C, are skipped with the reason.
var _ = BeforeEach(func() {
	if err := native.Available(); err != nil && slices.Contains(CurrentSpecReport().Labels(), "native") {
		Skip(err.Error())
	}
})

var _ = Describe("a build without cgo", func() {
	ctx := context.Background()
	reason := native.ErrUnavailable.Error()
	both := []executor.Unavailable{{Executor: "native", Reason: reason}, {Executor: "torch", Reason: reason}}

	It("runs the catalog on the oracle and the fallback, checks every lock and reports native and torch as not run", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		res, err := harness.Run(ctx, files, harness.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		Expect(res.Unavailable).To(Equal(both))
		execs := map[executor.Name]int{}
		for _, c := range res.Cases {
			execs[c.Executor]++
		}
		Expect(execs).To(HaveLen(2))
		Expect(execs["oracle"]).To(Equal(execs["fallback"]))
		Expect(res.Locks).To(HaveLen(5), "locks check the generated C, which needs no cgo")
		for _, l := range res.Locks {
			Expect(l.OK()).To(BeTrue(), l.Function)
		}
	})

	It("fails a run that asks for native or torch by name, with the reason", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		for _, b := range []executor.Name{"native", "torch"} {
			_, err := harness.Run(ctx, files, harness.Options{Backends: []executor.Name{"oracle", b}})
			Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), "%s: %v", b, err)
			Expect(err.Error()).To(ContainSubstring("backend " + string(b) + " is unavailable: " + reason))
		}
	})

	It("fails the cases of a native executor passed explicitly, with ErrUnavailable", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		res, err := harness.Run(ctx, files[:1], harness.Options{Executors: []executor.Executor{native.Executor{}}, Batches: []int{1}, SkipLocks: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeFalse())
		n := 0
		for _, c := range res.Cases {
			if c.Executor == "native" {
				n++
				Expect(c.Status).To(Equal(harness.StatusError))
				Expect(c.Error).To(ContainSubstring(reason))
			}
		}
		Expect(n).To(BeNumerically(">", 0))
	})
})

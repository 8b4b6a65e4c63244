package fuzz_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// servesNothing is an executor (like an external one for a user's module)
// that serves none of a generated program's functions.
type servesNothing struct{}

func (servesNothing) Name() executor.Name { return "mine" }
func (servesNothing) Prepare(context.Context, *program.File, *ir.Program) (executor.Prepared, error) {
	return servesNothingPrepared{}, nil
}

type servesNothingPrepared struct{}

func (servesNothingPrepared) Run(_ context.Context, fn string, _ map[string]*tensor.Tensor) (executor.Outcome, error) {
	return executor.Outcome{Path: "mine"}, fmt.Errorf("%w: mine does not serve %s", executor.ErrUnserved, fn)
}
func (servesNothingPrepared) Close() error { return nil }

var _ = Describe("a function an executor does not serve", func() {
	It("is no finding: there is nothing to compare", func() {
		rep, err := fuzz.Check(context.Background(), []byte(twoFuncs), servesNothing{}, fallback.Executor{})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(BeEmpty())
	})
})

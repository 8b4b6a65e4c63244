package rxginkgo_test

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/rxginkgo"
)

var _ = Describe("a case over the memory budget", func() {
	It("is an error case saying what it needs, with the budget from Case.Options", func() {
		src, err := os.ReadFile("../harness/testdata/memory/big_batch.rx")
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse("big_batch.rx", src)
		Expect(err).NotTo(HaveOccurred())
		c := rxginkgo.Case{File: f, Function: "score", Batch: 16777216, Options: harness.Options{
			Executors: []executor.Executor{fallback.Executor{}}, MaxMemory: 1 << 30}}
		res, err := rxginkgo.Run(context.Background(), c)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(2))
		for _, cs := range res.Cases {
			Expect(cs.Status).To(Equal(harness.StatusError))
			Expect(cs.Message).To(ContainSubstring("needs "))
			Expect(cs.Message).To(ContainSubstring("but the memory budget is 1.0 GiB"))
		}
		Expect(res).NotTo(rxginkgo.Pass())
	})
})

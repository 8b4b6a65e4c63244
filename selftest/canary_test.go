package selftest_test

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/selftest"
)

// hostile is the command that starts this test binary as the hostile
// executor (see TestMain).
func hostile() []string {
	self, err := os.Executable()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return []string{self, selftest.HostileArg}
}

var _ = Describe("the canaries", func() {
	ctx := context.Background()

	It("flag every rule of the judgement", func() {
		outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{Hostile: hostile()})
		for _, o := range outs {
			GinkgoWriter.Printf("%-24s %-24s %-8s %s\n", o.Canary.Rule, o.Canary.Name, o.Verdict, o.Report)
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(outs).To(HaveLen(len(selftest.Canaries())))
		for _, o := range outs {
			Expect(o.Verdict).To(Equal(selftest.Flagged), o.Canary.Name)
			Expect(o.Report).NotTo(BeEmpty())
		}
	})
})

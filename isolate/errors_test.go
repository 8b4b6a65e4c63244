package isolate_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/isolate"
)

var _ = Describe("crash texts", func() {
	It("knows a crash or a timeout of native or torch code by its text, and nothing else", func() {
		for _, text := range []string{"native crashed: signal SIGSEGV", "torch crashed: exit status 3",
			"native timed out after 10s", "torch timed out after 1s"} {
			Expect(isolate.IsCrashText(text)).To(BeTrue(), text)
		}
		for _, text := range []string{"unclassified", "division by zero", "native worker: bad message",
			"external executor crashed", "crashed: signal SIGSEGV", ""} {
			Expect(isolate.IsCrashText(text)).To(BeFalse(), text)
		}
	})
})

//go:build cgo

package harness_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
)

var _ = Describe("a build with cgo", func() {
	It("can run native code, and LeaveOutNative keeps every executor", func() {
		Expect(harness.NativeAvailable()).To(Succeed())
		execs := []harness.Executor{harness.FallbackExecutor{}, harness.NativeExecutor{}, harness.TorchExecutor{}}
		un := []harness.Unavailable{{Executor: "torch", Reason: "libtorch not found"}}
		gotExecs, gotUn := harness.LeaveOutNative(execs, un)
		Expect(gotExecs).To(Equal(execs))
		Expect(gotUn).To(Equal(un))
	})
})

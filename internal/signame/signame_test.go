package signame_test

import (
	"syscall"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/signame"
)

func TestSigname(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "signame Suite")
}

var _ = Describe("Name", func() {
	It("names the signals a crashed process dies of, and numbers the others", func() {
		Expect(signame.Name(syscall.SIGSEGV)).To(Equal("SIGSEGV"))
		Expect(signame.Name(syscall.SIGABRT)).To(Equal("SIGABRT"))
		Expect(signame.Name(syscall.SIGKILL)).To(Equal("SIGKILL"))
		Expect(signame.Name(syscall.Signal(34))).To(HavePrefix("34 ("))
	})
})

package testprog_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/testprog"
)

func TestTestprog(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/testprog")
}

var _ = Describe("Tiny", func() {
	It("checks, with its two functions", func() {
		f := testprog.Tiny()
		Expect(f.Func("lin")).NotTo(BeNil())
		Expect(f.Func("sq")).NotTo(BeNil())
	})

	It("panics on a program that does not check", func() {
		Expect(func() { testprog.MustParse("bad.rx", "package x\nfunc f(") }).To(Panic())
	})
})

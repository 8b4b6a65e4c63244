package cgen_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

func TestCgen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Cgen Suite")
}

// parse checks and lowers .rx source.
func parse(name, src string) (*program.File, *ir.Program) {
	GinkgoHelper()
	f, err := program.Parse(name, []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

// readTestdata reads a program of package native's testdata.
func readTestdata(name string) string {
	GinkgoHelper()
	b, err := os.ReadFile("../testdata/" + name)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

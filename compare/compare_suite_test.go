package compare_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

func TestCompare(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "compare")
}

// parseRx parses a program that must check.
func parseRx(name, src string) *program.File {
	f, err := program.Parse(name, []byte(src))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return f
}

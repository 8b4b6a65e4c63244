package external_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/internal/testprog"
	"github.com/rextio/rxeq/program"
)

func TestExternal(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "external")
}

func parseRx(name, src string) *program.File {
	f, err := program.Parse(name, []byte(src))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return f
}

func tinyFile() *program.File { return testprog.Tiny() }

// byExecutor returns the cases of one executor.
func byExecutor(cs []harness.Case, name executor.Name) []harness.Case {
	var out []harness.Case
	for _, c := range cs {
		if c.Executor == name {
			out = append(out, c)
		}
	}
	return out
}

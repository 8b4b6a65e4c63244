package fuzz_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fuzz"
)

// knownBugs are reproducers of bugs found by the fuzzer and not fixed
// yet, by file name, with where the fix belongs. Their specs are pending;
// delete the entry when the bug is fixed and the spec runs.
var knownBugs = map[string]string{}

var _ = Describe("Findings", func() {
	files, _ := filepath.Glob("testdata/findings/*.rx")
	for _, path := range files {
		name := filepath.Base(path)
		spec := It
		if _, known := knownBugs[name]; known {
			spec = PIt
		}
		spec("the oracle and the fallback agree on "+name, func() {
			src, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			rep, err := fuzz.Check(context.Background(), src)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Findings).To(BeEmpty())
		})
	}

	It("still reproduces every known bug", func() {
		for name := range knownBugs {
			src, err := os.ReadFile(filepath.Join("testdata/findings", name))
			Expect(err).NotTo(HaveOccurred())
			rep, err := fuzz.Check(context.Background(), src)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Findings).NotTo(BeEmpty(), "%s agrees now: remove it from knownBugs", name)
		}
	})
})

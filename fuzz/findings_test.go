package fuzz_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/native"
)

// knownBugs are reproducers of bugs found by the fuzzer and not fixed
// yet, by file name, with where the fix belongs. Their specs are pending;
// delete the entry when the bug is fixed and the spec runs.
var knownBugs = map[string]string{}

// nativeCache is the suite's private build cache for the native backend
// of allExecutors: one for all specs, so that the runtime library is
// compiled once per suite run rather than once per spec (some 5 s of CPU
// each).
var nativeCache string

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "rxeq-fuzz-test-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	nativeCache = filepath.Join(dir, "cache")
})

// allExecutors are the fallback and, where a C compiler is installed and
// rxeq is built with cgo, the native backend building into the suite's
// private cache, and torch where libtorch is installed too (building into
// the user's cache, so that its runtime is compiled once).
func allExecutors() []executor.Executor {
	all := []executor.Executor{fallback.Executor{}}
	if err := native.Available(); err != nil {
		GinkgoWriter.Println("native not checked: " + err.Error())
		return all
	}
	if _, err := exec.LookPath("cc"); err == nil {
		all = append(all, native.Executor{Options: native.Options{CacheDir: nativeCache}})
		if err := builtin.Available(executor.Torch); err == nil {
			all = append(all, native.Executor{Options: native.Options{Runtime: executor.Torch}})
		} else {
			GinkgoWriter.Println("torch not checked: " + err.Error())
		}
	} else {
		GinkgoWriter.Println("no C compiler: native not checked")
	}
	return all
}

var _ = Describe("Findings", func() {
	files, _ := filepath.Glob("testdata/findings/*.rx")
	for _, path := range files {
		name := filepath.Base(path)
		spec := It
		if _, known := knownBugs[name]; known {
			spec = PIt
		}
		spec("the oracle, the fallback, native and torch agree on "+name, func() {
			src, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			rep, err := fuzz.Check(context.Background(), src, allExecutors()...)
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

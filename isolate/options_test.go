package isolate_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
)

var _ = Describe("a library user's native options", Label("native"), func() {
	It("take effect in the worker as in process: the program compiler and both cache directories", func() {
		needCC()
		if _, err := exec.LookPath("tcc"); err != nil {
			Skip("no tcc to build the program's own C with")
		}
		dir := GinkgoT().TempDir()
		programs, runtimes := filepath.Join(dir, "programs"), filepath.Join(dir, "runtimes")
		e := workerExecutor("")
		e.Options.ProgramCC = "tcc"
		e.Options.CacheDir, e.Options.RuntimeCacheDir = programs, runtimes
		f, p := load("testdata/two.rx")
		pr, err := e.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		defer pr.Close()
		info := pr.(executor.Built).Info()
		Expect(info.Compiler).To(ContainSubstring("; program: tcc"), "the worker built the program's C with tcc")
		Expect(filepath.Dir(info.Library)).To(Equal(programs))
		Expect(strings.HasPrefix(info.Runtime, runtimes+string(filepath.Separator))).To(BeTrue(), info.Runtime)
	})
})

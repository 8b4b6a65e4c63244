package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
)

// pythonWith skips a spec unless /usr/bin/python3 imports numpy (CI
// installs Debian's python3-numpy).
func pythonWith(module string) {
	GinkgoHelper()
	if err := exec.Command("/usr/bin/python3", "-c", "import "+module).Run(); err != nil {
		Skip("/usr/bin/python3 cannot import " + module + " (CI installs python3-numpy and python3-torch)")
	}
}

var _ = Describe("external executors on the command line", func() {
	It("parses --executor NAME=COMMAND and refuses the built-in names and repeats", func() {
		var s executorSpecs
		Expect(s.Set("np=/usr/bin/python3 'my dir/a.py' m.py")).To(Succeed())
		Expect(s[0].Name).To(Equal("np"))
		Expect(s[0].Command).To(Equal([]string{"/usr/bin/python3", "my dir/a.py", "m.py"}))
		Expect(s.Set("np=other")).To(MatchError(ContainSubstring(`executor "np" given twice`)))
		Expect(s.Set("native=cmd")).To(MatchError(ContainSubstring("taken by a built-in executor")))
		Expect(s.flags()).To(Equal(` --executor 'np=/usr/bin/python3 '\''my dir/a.py'\'' m.py'`))
		// The rerun flag splits back into the same argv.
		again, err := external.ParseSpec("np=/usr/bin/python3 'my dir/a.py' m.py")
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Command).To(Equal(s[0].Command))
	})

	It("lets rxeq fuzz and reduce name an --executor in --executors", func() {
		var s executorSpecs
		Expect(s.Set("np=/usr/bin/python3 m.py")).To(Succeed())
		c, err := buildChecker("oracle,fallback,np", nativeSetup{external: s})
		Expect(err).NotTo(HaveOccurred())
		defer executor.CloseAll(c.Executors)
		Expect(c.Executors).To(HaveLen(2))
		Expect(c.Executors[1].Name()).To(Equal(executor.Name("np")))
		_, err = buildChecker("oracle,nope", nativeSetup{external: s})
		Expect(err).To(MatchError(ContainSubstring(`unknown executor "nope" (want oracle, fallback, native, torch, pytorch, torchscript, numpy, or a name defined with --executor)`)))
	})

	It("runs the reference scenario through a Python executor, skipping what the module lacks, into the reports", Label("e2e"), func() {
		pythonWith("numpy")
		dir := GinkgoT().TempDir()
		adapter, _ := filepath.Abs("../../python/rxeq_executor.py")
		module, _ := filepath.Abs("../../external/testdata/python/partial.py")
		code, out, errOut := rxeq("run", "--backend", "partial", "--batch", "1",
			"--executor", "partial=/usr/bin/python3 "+adapter+" "+module,
			"--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "j.xml"), "../../scenarios/reference.rx")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+1\s+partial\s+partial\s+PASS`))
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_mlp\s+1\s+partial\s+partial\s+SKIP`))
		Expect(out).To(ContainSubstring("1 passed, 0 failed, 0 errors, 2 skipped"))

		var rep struct {
			Cases []struct{ Function, Executor, Status, Message string }
		}
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.Cases).To(HaveLen(3))
		Expect(rep.Cases[1].Executor).To(Equal("partial"))
		Expect(rep.Cases[1].Status).To(Equal("skip"))
		Expect(rep.Cases[1].Message).To(ContainSubstring("partial does not serve score_mlp"))
		x, err := os.ReadFile(filepath.Join(dir, "j.xml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(x)).To(MatchRegexp(`<testcase name="score_mlp/b1/partial" classname="reference-scoring" time="[0-9.]+">\s*<skipped message="function not served: partial does not serve score_mlp`))
		Expect(string(x)).To(ContainSubstring(`skipped="2"`))
	})

	It("keeps the built-in executors, torch among them, beside an --executor", Label("e2e", "native"), func() {
		pythonWith("numpy")
		adapter, _ := filepath.Abs("../../python/rxeq_executor.py")
		module, _ := filepath.Abs("../../external/testdata/python/partial.py")
		code, out, errOut := rxeq("run", "--batch", "1", "--executor", "partial=/usr/bin/python3 "+adapter+" "+module,
			"../../scenarios/reference.rx")
		Expect(code).To(Equal(0), out+errOut)
		for _, e := range []string{"fallback", "native", "partial"} {
			Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+1\s+`+e+`\s+`+e+`\s+PASS`), e)
		}
		if err := builtin.Available(executor.Torch); err != nil {
			Expect(out).To(ContainSubstring("torch: not run on this machine: "))
		} else {
			Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+1\s+torch\s+torch\s+PASS`))
		}
	})
})

package pyexport_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/pyexport"
)

// runRepro writes script to a temporary repro.py, runs it with the
// system Python and returns its exit status and output.
func runRepro(script string) (int, string) {
	GinkgoHelper()
	path := filepath.Join(GinkgoT().TempDir(), "repro.py")
	Expect(os.WriteFile(path, []byte(script), 0o644)).To(Succeed())
	out, err := exec.Command(systemPython, "-B", path).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	Expect(err).NotTo(HaveOccurred(), string(out))
	return 0, string(out)
}

var _ = Describe("Repro", Label("python"), func() {
	DescribeTable("writes a standalone repro.py that exits 0 for a correct framework and 1 for a deliberately wrong one",
		func(name executor.Name) {
			needPython("numpy", "torch")
			f, p := load("../scenarios/reference.rx")
			in, err := harness.GenerateInputs(f, f.Func("score_pipeline"), 5, 7, nil)
			Expect(err).NotTo(HaveOccurred())
			script, err := pyexport.Repro(p, pyexport.ReproOptions{Executor: name, Func: "score_pipeline", Inputs: in, Version: "test"})
			Expect(err).NotTo(HaveOccurred())
			s := string(script)
			Expect(s).NotTo(ContainSubstring("rxeq_"))
			Expect(s).NotTo(MatchRegexp(`(?m)^import rxeq|^from rxeq`))
			Expect(s).To(ContainSubstring("base64.b64decode("))

			code, out := runRepro(s)
			Expect(code).To(Equal(0), out)
			Expect(out).To(ContainSubstring("not reproduced"))
			Expect(out).To(MatchRegexp(`framework: (numpy|pytorch|torchscript)`))

			// A wrong framework: the hidden layer's Tanh became a Sigmoid
			// in the framework's function only (the reference is a string).
			wrong := strings.Replace(s, "torch.tanh(hidden)", "torch.sigmoid(hidden)", 1)
			if name == executor.NumPy {
				wrong = strings.Replace(wrong, "hidden = np.tanh(hidden)\n", "hidden = sigmoid(hidden)\n", 1)
			}
			Expect(wrong).NotTo(Equal(s))
			code, out = runRepro(wrong)
			Expect(code).To(Equal(1), out)
			Expect(out).To(ContainSubstring("REPRODUCED"))
			Expect(out).To(MatchRegexp(`logits: \d+ / 40 mismatched; first:\n +\[0, \d\] want `))
		},
		Entry("pytorch", executor.PyTorch),
		Entry("torchscript", executor.TorchScript),
		Entry("numpy", executor.NumPy),
	)

	It("compares errors by their text", func() {
		needPython("numpy", "torch")
		f, p := load("../scenarios/error.rx")
		fn := f.Funcs[0].Name
		in, err := harness.GenerateInputs(f, f.Funcs[0], 2, 7, nil)
		Expect(err).NotTo(HaveOccurred())
		script, err := pyexport.Repro(p, pyexport.ReproOptions{Executor: executor.TorchScript, Func: fn, Inputs: in})
		Expect(err).NotTo(HaveOccurred())
		code, out := runRepro(string(script))
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("CheckedRem: division by zero"))
	})
})

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("rxeq export --format torch|numpy", Label("e2e"), func() {
	It("writes one module for every function, to stdout or into -o DIR, the same bytes every time, and it runs under python3", func() {
		dir := GinkgoT().TempDir()
		for _, format := range []string{"torch", "numpy"} {
			code, _, stderr := rxeq("export", "--format", format, "-o", dir, "reference-scoring")
			Expect(code).To(Equal(exitOK), stderr)
			code, stdout, stderr := rxeq("export", "--format", format, "reference-scoring")
			Expect(code).To(Equal(exitOK), stderr)
			Expect(stdout).To(Equal(string(must(os.ReadFile(filepath.Join(dir, "reference_"+format+".py"))))))
			Expect(stdout).To(ContainSubstring("def score_mlp("))
		}
		code, stdout, stderr := rxeq("export", "--format", "numpy", "--func", "score_mlp", "reference-scoring")
		Expect(code).To(Equal(exitOK), stderr)
		Expect(stdout).To(ContainSubstring("def score_mlp("))
		Expect(stdout).NotTo(ContainSubstring("def score_linear("))

		if exec.Command("/usr/bin/python3", "-c", "import numpy, torch").Run() != nil {
			Skip("python3-numpy or python3-torch is not installed; ci/setup.sh installs them")
		}
		out, err := exec.Command("/usr/bin/python3", "-B", "-c", `
import sys, numpy as np, torch
sys.path.insert(0, sys.argv[1])
import reference_torch as t, reference_numpy as n
rng = np.random.default_rng(1)
x = rng.standard_normal((4, 32), dtype=np.float32)
w = rng.standard_normal((32, 8), dtype=np.float32)
b = rng.standard_normal(8, dtype=np.float32)
lt, pt, ct = t.score_linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b))
ls, ps, cs = torch.jit.script(t.score_linear)(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b))
ln, pn, cn = n.score_linear(x, w, b)
assert ln.dtype == np.float32 and pn.dtype == np.float32 and cn.dtype == np.int64, (ln.dtype, pn.dtype, cn.dtype)
assert np.allclose(lt.numpy(), ln, atol=1e-5) and np.allclose(ls.numpy(), ln, atol=1e-5)
assert (ct.numpy() == cn).all() and (cs.numpy() == cn).all()
print("ok")
`, dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(Equal("ok\n"))
	})
})

var _ = Describe("rxeq run --dump with the generated-code executors", Label("e2e", "python"), func() {
	It("writes a repro.py beside the .npy files of a failing case, which exits 1 while the discrepancy reproduces", func() {
		if exec.Command("/usr/bin/python3", "-c", "import numpy, torch").Run() != nil {
			Skip("python3-numpy or python3-torch is not installed; ci/setup.sh installs them")
		}
		dir := GinkgoT().TempDir()
		// Without the ledger, relu(-0) = -0 fails the run; with it (the
		// default), the case is an expected failure, and the reproducer is
		// written all the same.
		code, stdout, stderr := rxeq("run", "--backend", "pytorch,numpy", "--ledger", "none", "--dump", GinkgoT().TempDir(), "../../pyexport/testdata/relu_negzero.rx")
		Expect(code).To(Equal(exitFail), stdout+stderr)
		code, stdout, stderr = rxeq("run", "--backend", "pytorch,numpy", "--dump", dir, "../../pyexport/testdata/relu_negzero.rx")
		Expect(code).To(Equal(exitOK), stdout+stderr)
		Expect(stdout).To(ContainSubstring("XFAIL relu-negzero/f/b2/pytorch"))
		caseDir := filepath.Join(dir, "relu-negzero", "f", "b2")
		Expect(filepath.Join(caseDir, "inputs", "x.npy")).To(BeAnExistingFile())
		Expect(filepath.Join(caseDir, "repro_numpy.py")).NotTo(BeAnExistingFile())
		repro := filepath.Join(caseDir, "repro_pytorch.py")
		Expect(repro).To(BeAnExistingFile())
		out, err := exec.Command("/usr/bin/python3", "-B", repro).CombinedOutput()
		var ee *exec.ExitError
		Expect(errors.As(err, &ee)).To(BeTrue(), string(out))
		Expect(ee.ExitCode()).To(Equal(1))
		Expect(string(out)).To(ContainSubstring("want inf got -inf"))
		Expect(string(out)).To(ContainSubstring("REPRODUCED"))
	})
})

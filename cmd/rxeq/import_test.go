package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor/npy"
)

var _ = Describe("rxeq import", func() {
	It("writes the program and the weights, and rxeq run --inputs runs it with them", Label("e2e"), func() {
		dir := GinkgoT().TempDir()
		rx, weights := filepath.Join(dir, "linear.rx"), filepath.Join(dir, "weights")
		code, out, errOut := rxeq("import", "--func", "score", "-o", rx, "--weights", weights, "testdata/linear.onnx")
		Expect(code).To(Equal(0), out+errOut)
		src, err := os.ReadFile(rx)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(src)).To(HavePrefix("// Imported by rxeq import from linear.onnx (producer make_linear.py, opset 17, graph \"linear\").\n"))
		Expect(string(src)).To(ContainSubstring("func score(x [B][4]float32, W [4][3]float32, b [3]float32) (logits [B][3]float32, probs [B][3]float32, classes [B]int64) {\n\tlogits = MatMul(x, W) + b\n"))
		w, err := npy.ReadFile(filepath.Join(weights, "W.npy"))
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Shape).To(Equal([]int{4, 3}))
		Expect(w.F32[0]).To(BeNumerically("~", 2.0409, 1e-4)) // numpy's default_rng(3).normal(): the first weight

		code, out, errOut = rxeq("run", "--backend", "oracle,fallback", "--inputs", weights, rx)
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(ContainSubstring("W from " + filepath.Join(weights, "W.npy")))
		Expect(out).To(MatchRegexp(`score\s+score\s+16\s+fallback\s+fallback\s+PASS`))
	})

	It("runs a PyTorch MLP with its weights and PyTorch's batch through oracle, fallback and native, with reports, agreeing with PyTorch", Label("e2e", "native"), func() {
		if err := exec.Command("/usr/bin/python3", "-c", "import torch, onnx").Run(); err != nil {
			Skip("python3-torch is not installed (/usr/bin/python3 -c 'import torch': " + err.Error() + "); ci/setup.sh installs it")
		}
		dir := GinkgoT().TempDir()
		out, err := exec.Command("/usr/bin/python3", "../../onnx/testdata/torch_mlp.py", dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		rx, weights := filepath.Join(dir, "mlp.rx"), filepath.Join(dir, "weights")
		code, stdout, errOut := rxeq("import", "--func", "score_mlp", "-o", rx, "--weights", weights, filepath.Join(dir, "mlp.onnx"))
		Expect(code).To(Equal(0), stdout+errOut)
		x, err := os.ReadFile(filepath.Join(dir, "x.npy"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(weights, "x.npy"), x, 0o644)).To(Succeed())
		dump := filepath.Join(dir, "dump")
		code, stdout, errOut = rxeq("run", "--backend", "oracle,fallback,native", "--inputs", weights, "--dump", dump,
			"--json", filepath.Join(dir, "report.json"), "--junit", filepath.Join(dir, "junit.xml"), rx)
		Expect(code).To(Equal(0), stdout+errOut)
		Expect(stdout).To(ContainSubstring("inputs of score_mlp/score_mlp/b7: fc1_bias from "))
		Expect(stdout).To(MatchRegexp(`score_mlp\s+score_mlp\s+7\s+native\s+native\s+PASS`))
		Expect(filepath.Join(dir, "report.json")).To(BeAnExistingFile())
		Expect(filepath.Join(dir, "junit.xml")).To(BeAnExistingFile())
		for _, name := range []string{"logits", "probs", "classes"} {
			want, err := npy.ReadFile(filepath.Join(dir, name+".npy"))
			Expect(err).NotTo(HaveOccurred())
			got, err := npy.ReadFile(filepath.Join(dump, "score_mlp/score_mlp/b7/outputs/oracle", name+".npy"))
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Shape).To(Equal(want.Shape))
			w, g := want.Float64s(), got.Float64s()
			for i := range w {
				Expect(g[i]).To(BeNumerically("~", w[i], 1e-5+1e-5*math.Abs(w[i])), "%s[%d]", name, i)
			}
		}
	})

	It("round-trips an exported catalog function to stdout", func() {
		dir := GinkgoT().TempDir()
		model := filepath.Join(dir, "m.onnx")
		code, out, errOut := rxeq("export", "--format", "onnx", "--func", "score_divisor", "-o", model, "remainder-by-zero")
		Expect(code).To(Equal(0), out+errOut)
		code, out, errOut = rxeq("import", model)
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("\t\tif CheckedRem(round_idx, divisor) == 0 {\n"))
		Expect(out).To(ContainSubstring("func score_divisor(x [B][32]float32, w [32][8]float32, divisor int64)"))
	})

	It("exits 2 without --weights for a model with weights, and 1 for an op without an rxeq form, writing nothing", func() {
		dir := GinkgoT().TempDir()
		rx := filepath.Join(dir, "out.rx")
		code, out, errOut := rxeq("import", "-o", rx, "testdata/linear.onnx")
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(Equal("rxeq import: testdata/linear.onnx has 2 weights (W, b): name a directory for their .npy files with --weights DIR\n"))
		code, _, errOut = rxeq("import", "-o", rx, "--weights", dir, "testdata/erf.onnx")
		Expect(code).To(Equal(1))
		Expect(errOut).To(HavePrefix(`rxeq import: testdata/erf.onnx: onnx import: node "erf_0" (Erf): op Erf has no rxeq form; supported ops: Abs, Add, `))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())

		code, _, errOut = rxeq("import")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("usage: rxeq import [--func NAME] [-o OUT.rx] [--weights DIR] MODEL.onnx"))
		code, _, errOut = rxeq("import", "--func", "not a name", "testdata/linear.onnx")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`function name "not a name" is not an identifier`))
		code, _, errOut = rxeq("import", filepath.Join(dir, "missing.onnx"))
		Expect(code).To(Equal(2))
		Expect(strings.Count(errOut, "\n")).To(Equal(1))
	})
})

var _ = Describe("rxeq conformance", func() {
	It("exits 2 naming the package when the node tests are not there, and on bad usage", func() {
		code, _, errOut := rxeq("conformance", "onnx", "--root", "/nonexistent")
		Expect(code).To(Equal(2))
		Expect(errOut).To(Equal("rxeq conformance: /nonexistent: no ONNX node tests there; install them with apt-get install libonnx-testdata (ci/setup.sh does), or name their directory with --root\n"))
		code, _, errOut = rxeq("conformance", "tflite")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("usage: rxeq conformance onnx"))
	})

	It("prints the table for ONNX's node tests", Label("e2e"), func() {
		if _, err := os.Stat("/usr/share/libonnx-testdata/data/node"); err != nil {
			Skip("libonnx-testdata is not installed; ci/setup.sh installs it")
		}
		code, out, errOut := rxeq("conformance", "onnx", "--backend", "fallback")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`ONNX node tests: \d+ found, \d+ imported, \d+ not imported\n  oracle\s+(\d+) / (\d+) agree`))
		Expect(out).To(MatchRegexp(`fallback\s+(\d+) / (\d+) agree`))
		Expect(out).To(ContainSubstring("not imported, by reason (class and op):"))
		Expect(out).NotTo(ContainSubstring("FAIL"))
	})

	It("runs the node tests through the generated Python executors, each agreeing on every imported test or listed as unavailable", Label("e2e", "slow"), func() {
		if _, err := os.Stat("/usr/share/libonnx-testdata/data/node"); err != nil {
			Skip("libonnx-testdata is not installed; ci/setup.sh installs it")
		}
		code, out, errOut := rxeq("conformance", "onnx", "--backend", "pytorch,torchscript,numpy")
		Expect(code).To(Equal(0), out+errOut)
		m := regexp.MustCompile(`ONNX node tests: \d+ found, (\d+) imported`).FindStringSubmatch(out)
		Expect(m).NotTo(BeNil(), out)
		ran := 0
		for _, name := range []string{"pytorch", "torchscript", "numpy"} {
			if strings.Contains(out, "\n"+name+": unavailable: ") || strings.HasPrefix(out, name+": unavailable: ") {
				continue
			}
			ran++
			Expect(out).To(MatchRegexp(`\n  %s\s+%s / %s agree`, name, m[1], m[1]), "every imported test agrees for %s", name)
		}
		if ran == 0 {
			Skip("no Python executor can run here:\n" + out)
		}
		Expect(out).NotTo(MatchRegexp(`(?m)^FAIL `))
	})
})

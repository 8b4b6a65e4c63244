package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/jsexport"
)

// tfjsDir is where the TensorFlow.js packages are: $RXEQ_TFJS_DIR or the
// default; needTFJS skips (or, under RXEQ_REQUIRE_TFJS, fails) without them.
func tfjsDir() string {
	if d := os.Getenv("RXEQ_TFJS_DIR"); d != "" {
		return d
	}
	return jsexport.DefaultDir()
}

func needTFJS() {
	GinkgoHelper()
	if err := jsexport.Available(executor.TFJSWasm, jsexport.ExecutorOptions{Dir: tfjsDir()}); err != nil {
		if os.Getenv("RXEQ_REQUIRE_TFJS") != "" {
			Fail("TensorFlow.js is required here (RXEQ_REQUIRE_TFJS is set) but: " + err.Error())
		}
		Skip(err.Error())
	}
}

var _ = Describe("rxeq export --format tfjs", Label("e2e"), func() {
	It("writes one CommonJS module for the functions, to stdout or into -o DIR, the same bytes every time", func() {
		dir := GinkgoT().TempDir()
		code, _, stderr := rxeq("export", "--format", "tfjs", "-o", dir, "reference-scoring")
		Expect(code).To(Equal(exitOK), stderr)
		code, stdout, stderr := rxeq("export", "--format", "tfjs", "reference-scoring")
		Expect(code).To(Equal(exitOK), stderr)
		Expect(stdout).To(Equal(string(must(os.ReadFile(filepath.Join(dir, "reference_tfjs.js"))))))
		Expect(stdout).To(ContainSubstring("function score_mlp(x, w1, b1, w2, b2) {"))
		code, stdout, stderr = rxeq("export", "--format", "tfjs", "--func", "score_mlp", "reference-scoring")
		Expect(code).To(Equal(exitOK), stderr)
		Expect(stdout).To(ContainSubstring("module.exports = { score_mlp };"))
		Expect(stdout).NotTo(ContainSubstring("function score_linear("))
	})
})

var _ = Describe("rxeq run with the TensorFlow.js executors", Label("e2e", "tfjs"), func() {
	It("exits 2 with the reason and the install command when the packages are missing and one is named, and lists them as unavailable otherwise", func() {
		GinkgoT().Setenv("RXEQ_TFJS_DIR", filepath.Join(GinkgoT().TempDir(), "none"))
		code, stdout, stderr := rxeq("run", "--backend", "tfjs-wasm", "reference-scoring")
		Expect(code).To(Equal(exitUsage), stdout+stderr)
		Expect(stderr).To(ContainSubstring("--backend tfjs-wasm: tfjs-wasm is unavailable"))
		Expect(stderr).To(ContainSubstring("npm ci --ignore-scripts"))
	})

	It("writes a repro_tfjs-wasm.js beside the .npy files of an expected failure, which exits 1 under plain node", func() {
		needTFJS()
		dir := GinkgoT().TempDir()
		code, stdout, stderr := rxeq("run", "--backend", "tfjs-cpu,tfjs-wasm", "--ledger", "none", "../../ledger/programs/tfjs-maximum-signed-zero.rx")
		Expect(code).To(Equal(exitFail), stdout+stderr)
		code, stdout, stderr = rxeq("run", "--backend", "tfjs-cpu,tfjs-wasm", "--dump", dir, "--json", filepath.Join(dir, "r.json"), "../../ledger/programs/tfjs-maximum-signed-zero.rx")
		Expect(code).To(Equal(exitOK), stdout+stderr)
		Expect(stdout).To(ContainSubstring("XFAIL tfjs-maximum-signed-zero/f/b1/tfjs-wasm"))
		Expect(string(must(os.ReadFile(filepath.Join(dir, "r.json"))))).To(MatchRegexp(`"tfjs-wasm": "node \d+\.\d+\.\d+, tfjs-backend-wasm 4\.22\.0, tfjs-core 4\.22\.0, threads 1"`))
		caseDir := filepath.Join(dir, "tfjs-maximum-signed-zero", "f", "b1")
		Expect(filepath.Join(caseDir, "repro_tfjs-cpu.js")).NotTo(BeAnExistingFile())
		repro := filepath.Join(caseDir, "repro_tfjs-wasm.js")
		Expect(repro).To(BeAnExistingFile())
		cmd := exec.Command("node", repro)
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(tfjsDir(), "node_modules"))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		Expect(errors.As(err, &ee)).To(BeTrue(), string(out))
		Expect(ee.ExitCode()).To(Equal(1))
		Expect(string(out)).To(ContainSubstring("want Infinity got -Infinity"))
		Expect(string(out)).To(ContainSubstring("REPRODUCED"))
	})
})

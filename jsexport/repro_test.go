package jsexport_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/tensor"
)

// runRepro writes script alone into a fresh directory and runs it with
// plain node, the packages found through NODE_PATH only.
func runRepro(script []byte) (string, int) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	path := filepath.Join(dir, "repro.js")
	Expect(os.WriteFile(path, script, 0o644)).To(Succeed())
	cmd := exec.Command("node", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(tfjsDir(), "node_modules"), "RXEQ_TFJS_DIR=/nonexistent")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	return string(out), code
}

var _ = Describe("Repro", func() {
	It("writes a repro.js that exits 1 on the backend where the discrepancy holds and 0 where it does not", func() {
		needTFJS()
		f, p := load("../ledger/programs/tfjs-maximum-signed-zero.rx")
		in, err := harness.GenerateInputs(f, f.Func("f"), 3, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, tc := range []struct {
			name executor.Name
			code int
		}{{executor.TFJSWasm, 1}, {executor.TFJSCPU, 0}} {
			script, err := jsexport.Repro(p, jsexport.ReproOptions{Executor: tc.name, Func: "f", Inputs: in, Source: "tfjs-maximum-signed-zero.rx", Version: "test"})
			Expect(err).NotTo(HaveOccurred())
			Expect(string(script)).To(HavePrefix("#!/usr/bin/env node\n// Reproducer written by rxeq test: f from tfjs-maximum-signed-zero.rx, run by " + string(tc.name)))
			Expect(string(script)).NotTo(ContainSubstring("rxeq-serve"))
			out, code := runRepro(script)
			Expect(code).To(Equal(tc.code), out)
			Expect(out).To(ContainSubstring("executor: " + string(tc.name) + " | node "))
			Expect(out).To(ContainSubstring("tfjs-core 4.22.0"))
			if tc.code == 1 {
				Expect(out).To(MatchRegexp(`out: \d+ / 120 mismatched; first:\n    \[\d+, \d+\] want Infinity got -Infinity`))
				Expect(out).To(HaveSuffix("REPRODUCED\n"))
			} else {
				Expect(out).To(ContainSubstring("out: 120 elements agree"))
			}
		}
	})

	It("reproduces tf.argMax's NaN on both backends, and compares errors by their text", func() {
		needTFJS()
		f, p := load("../ledger/programs/tfjs-argmax-nan.rx")
		in, err := harness.GenerateInputs(f, f.Func("f"), 3, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, name := range both {
			script, err := jsexport.Repro(p, jsexport.ReproOptions{Executor: name, Func: "f", Inputs: in})
			Expect(err).NotTo(HaveOccurred())
			out, code := runRepro(script)
			Expect(code).To(Equal(1), out)
			Expect(out).To(ContainSubstring("classes: "))
		}
		_, p = parse("e.rx", `package e
func f(x [B]float32, d int64) (y [B]float32) {
	y = x * 2.0
	if CheckedRem(3, d) == 1 {
		y = x
	}
	return
}
`)
		script, err := jsexport.Repro(p, jsexport.ReproOptions{Executor: executor.TFJSCPU, Func: "f",
			Inputs: map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{1, -0.5}, 2), "d": tensor.Scalar(0)}})
		Expect(err).NotTo(HaveOccurred())
		out, code := runRepro(script)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("expected error: f: CheckedRem: division by zero (dividend=3) at e.rx:4:5"))
		Expect(strings.Count(out, "f: CheckedRem: division by zero (dividend=3) at e.rx:4:5")).To(Equal(2))
	})

	It("refuses an executor it has no reproducer for", func() {
		_, p := parse("e.rx", "package e\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x\n\treturn\n}\n")
		_, err := jsexport.Repro(p, jsexport.ReproOptions{Executor: executor.NumPy, Func: "f"})
		Expect(err).To(MatchError(ContainSubstring(`no reproducer for executor "numpy"`)))
	})
})

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("rxeq export --format onnx", Label("e2e"), func() {
	It("writes one F.onnx per function into -o DIR, the same bytes every time, which python3-onnx's checker accepts", func() {
		dir := GinkgoT().TempDir()
		code, _, stderr := rxeq("export", "--format", "onnx", "-o", dir, "reference-scoring")
		Expect(code).To(Equal(exitOK), stderr)
		var names []string
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range entries {
			names = append(names, e.Name())
		}
		Expect(names).To(Equal([]string{"score_linear.onnx", "score_mlp.onnx", "score_pipeline.onnx"}))

		code, stdout, stderr := rxeq("export", "--format", "onnx", "--func", "score_mlp", "reference-scoring")
		Expect(code).To(Equal(exitOK), stderr)
		Expect([]byte(stdout)).To(Equal(must(os.ReadFile(filepath.Join(dir, "score_mlp.onnx")))))

		if exec.Command("/usr/bin/python3", "-c", "import onnx").Run() != nil {
			Skip("python3-onnx is not installed; ci/setup.sh installs it")
		}
		out, err := exec.Command("/usr/bin/python3", "-c", `
import glob, sys, onnx
for f in sorted(glob.glob(sys.argv[1] + "/*.onnx")):
    onnx.checker.check_model(onnx.load(f), full_check=True)
    print(f.rsplit("/", 1)[1], "ok")
`, dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(strings.Count(string(out), " ok\n")).To(Equal(3))
	})

	It("needs --func or -o DIR for a file of several functions", func() {
		code, _, stderr := rxeq("export", "--format", "onnx", "reference-scoring")
		Expect(code).To(Equal(exitUsage))
		Expect(stderr).To(ContainSubstring("3 files to write"))
	})
})

func must[T any](v T, err error) T {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return v
}

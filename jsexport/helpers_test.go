package jsexport_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// tfjsDir is where the specs find the packages: $RXEQ_TFJS_DIR, or the
// default where ci/setup.sh installs them.
func tfjsDir() string {
	if d := os.Getenv("RXEQ_TFJS_DIR"); d != "" {
		return d
	}
	return jsexport.DefaultDir()
}

// needTFJS skips a spec unless node and the packages are installed, and
// fails it instead when RXEQ_REQUIRE_TFJS is set (ci/test.sh sets it
// after ci/setup.sh installed them).
func needTFJS() {
	GinkgoHelper()
	for _, name := range []executor.Name{executor.TFJSCPU, executor.TFJSWasm} {
		if err := jsexport.Available(name, jsexport.ExecutorOptions{Dir: tfjsDir()}); err != nil {
			if os.Getenv("RXEQ_REQUIRE_TFJS") != "" {
				Fail("TensorFlow.js is required here (RXEQ_REQUIRE_TFJS is set) but: " + err.Error())
			}
			Skip(err.Error())
		}
	}
}

func opts() jsexport.ExecutorOptions { return jsexport.ExecutorOptions{Dir: tfjsDir()} }

// parse checks and lowers a program given as source.
func parse(name, src string) (*program.File, *ir.Program) {
	GinkgoHelper()
	f, err := program.Parse(name, []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

// load parses a .rx file.
func load(path string) (*program.File, *ir.Program) {
	GinkgoHelper()
	src, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return parse(strings.TrimPrefix(path, "../"), string(src))
}

func export(p *ir.Program) string {
	GinkgoHelper()
	m, err := jsexport.Export(p, jsexport.Options{Source: p.File, Version: "test"})
	Expect(err).NotTo(HaveOccurred())
	return string(m.Source)
}

// runNode writes files (name -> text) into a fresh directory and runs
// `node main.js` there with NODE_PATH set to the packages' node_modules,
// so that the module's require('@tensorflow/tfjs-core') resolves as it
// would in a user's project; it returns stdout, stderr and the exit
// status.
func runNode(files map[string]string) (string, string, int) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for name, text := range files {
		Expect(os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)).To(Succeed())
	}
	cmd := exec.Command("node", "main.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(tfjsDir(), "node_modules"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	return stdout.String(), stderr.String(), code
}

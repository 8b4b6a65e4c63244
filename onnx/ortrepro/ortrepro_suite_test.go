package ortrepro_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

func TestORTRepro(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ONNX Runtime Reproducer Suite")
}

// systemPython runs the scripts: Debian's, where CI installs
// python3-numpy.
const systemPython = "/usr/bin/python3"

// needLibrary skips the spec when ONNX Runtime is not installed
// ($RXEQ_ORT_LIB, else where ci/setup.sh puts it) or the system Python
// has no NumPy, and fails it when RXEQ_REQUIRE_ORT is set (ci/test.sh
// sets it after ci/setup.sh installed the library).
func needLibrary() {
	GinkgoHelper()
	if _, err := ort.Find(os.Getenv("RXEQ_ORT_LIB")); err != nil {
		if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
			Fail("ONNX Runtime is required here (RXEQ_REQUIRE_ORT is set) but: " + err.Error())
		}
		Skip("ONNX Runtime is not installed: " + err.Error())
	}
	if out, err := exec.Command(systemPython, "-c", "import numpy").CombinedOutput(); err != nil {
		Skip(systemPython + " cannot import numpy (CI installs python3-numpy): " + string(out))
	}
}

// load parses and lowers an .rx file and generates the inputs of fn at
// batch as the runner does (the file's seed); tolerances are fn's
// outputs' (its //rx:tolerance lines over rxeq's defaults).
func load(path, fn string, batch int) (*ir.Program, map[string]*tensor.Tensor) {
	p, in, _ := loadWithTolerances(path, fn, batch)
	return p, in
}

// loadWithTolerances is load with the tolerances of fn's outputs.
func loadWithTolerances(path, fn string, batch int) (*ir.Program, map[string]*tensor.Tensor, map[string]compare.Tolerance) {
	GinkgoHelper()
	src, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	f, err := program.Parse(filepath.Base(path), src)
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	seed := uint64(harness.DefaultScenarioSeed)
	if f.HasSeed {
		seed = f.Seed
	}
	in, err := harness.GenerateInputs(f, f.Func(fn), batch, seed, nil)
	Expect(err).NotTo(HaveOccurred())
	return p, in, compare.Tolerances(f, f.Func(fn), compare.DefaultTolerance())
}

// runScript writes script to a temporary repro.py, runs it with the
// system Python (RXEQ_ORT_LIB as the specs' environment has it) and
// returns its exit status and output.
func runScript(script []byte) (int, string) {
	GinkgoHelper()
	path := filepath.Join(GinkgoT().TempDir(), "repro.py")
	Expect(os.WriteFile(path, script, 0o644)).To(Succeed())
	out, err := exec.Command(systemPython, "-B", path).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	Expect(err).NotTo(HaveOccurred(), string(out))
	return 0, string(out)
}

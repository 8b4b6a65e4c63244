package pyexport_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/pyexport"
)

// systemPython runs the generated modules: Debian's, where CI installs
// python3-numpy and python3-torch.
const systemPython = "/usr/bin/python3"

// needPython skips a spec unless systemPython imports every module named.
func needPython(modules ...string) {
	GinkgoHelper()
	args := []string{"-c", "import sys\nfor m in sys.argv[1:]: __import__(m)"}
	out, err := exec.Command(systemPython, append(args, modules...)...).CombinedOutput()
	if err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		Skip(systemPython + " cannot import " + strings.Join(modules, ", ") + " (CI installs python3-numpy and python3-torch): " + line)
	}
}

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

func export(p *ir.Program, format pyexport.Format) string {
	GinkgoHelper()
	m, err := pyexport.Export(p, pyexport.Options{Format: format, Source: p.File, Version: "test"})
	Expect(err).NotTo(HaveOccurred())
	return string(m.Source)
}

// runPython runs script with the module text importable as "gen", and
// returns its stdout.
func runPython(module, script string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	Expect(os.WriteFile(filepath.Join(dir, "gen.py"), []byte(module), 0o644)).To(Succeed())
	cmd := exec.Command(systemPython, "-B", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	Expect(err).NotTo(HaveOccurred(), stderr)
	return string(out)
}

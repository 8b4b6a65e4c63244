package isolate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

func TestIsolate(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Isolate Suite")
}

// Suite-wide paths: a private build cache and the fault objects.
var (
	cacheDir string
	faults   = map[string]string{} // "segv", "abort", "hang" -> object path
	self     string
)

var _ = BeforeSuite(func() {
	var err error
	self, err = os.Executable()
	Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "rxeq-isolate-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	cacheDir = filepath.Join(dir, "cache")
	if _, err := exec.LookPath("cc"); err != nil {
		return // the native specs skip themselves
	}
	for _, kind := range []string{"segv", "abort", "hang"} {
		obj := filepath.Join(dir, "fault_"+kind+".o")
		out, err := exec.Command("cc", "-c", "-fPIC", "-O0", "-o", obj, filepath.Join("testdata", "fault_"+kind+".c")).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		faults[kind] = obj
	}
})

// needCC skips a spec when there is no C compiler.
func needCC() {
	if len(faults) == 0 {
		Skip("no C compiler (cc)")
	}
}

// executor returns an isolated executor whose worker is this test binary,
// building with cc plus a fault object ("" for none).
//
// Fault injection needs no hook in native/ or its runtime: native.Options.CC
// may carry arguments, so CC = "cc -Wl,--wrap=tanh fault_segv.o" links the
// runtime library with a __wrap_tanh that crashes (or aborts, or spins),
// and the tanh call of the runtime's plain C Tanh kernel (chosen with
// native.Options.ISA = "c", which the worker receives) lands there. Those arguments are
// part of the build cache key, so a fault build never replaces a normal
// one; the suite still uses a private cache directory.
func workerExecutor(fault string) isolate.Executor {
	cc, isa := "cc", ""
	env := []string{workerEnv}
	if fault != "" {
		cc, isa = "cc -Wl,--wrap=tanh "+faults[fault], "c"
	}
	return isolate.Executor{
		Options: native.Options{CC: cc, CacheDir: cacheDir, ISA: isa},
		Command: []string{self},
		Env:     env,
	}
}

// load parses, checks and lowers a .rx file.
func load(path string) (*program.File, *ir.Program) {
	src, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	f, err := program.Parse(path, src)
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

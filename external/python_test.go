package external_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
)

// systemPython is the interpreter the Python adapter's specs use: Debian's,
// where CI installs python3-numpy and python3-torch.
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

// pythonExecutor serves module (a path relative to the harness package)
// through the repository's adapter.
func pythonExecutor(name, module string) *external.Executor {
	GinkgoHelper()
	adapter, err := filepath.Abs("../python/rxeq_executor.py")
	Expect(err).NotTo(HaveOccurred())
	mod, err := filepath.Abs(module)
	Expect(err).NotTo(HaveOccurred())
	e, err := external.New(external.Options{Name: name, Command: []string{systemPython, adapter, mod}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(e.Close)
	return e
}

func loadRx(paths ...string) []*program.File {
	GinkgoHelper()
	var files []*program.File
	for _, p := range paths {
		src, err := os.ReadFile(p)
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse(filepath.Base(p), src)
		Expect(err).NotTo(HaveOccurred())
		files = append(files, f)
	}
	return files
}

var _ = Describe("the Python adapter", Label("python"), func() {
	DescribeTable("serves the examples of the reference and the runtime-error scenarios, agreeing with the oracle",
		func(name, module string, modules ...string) {
			needPython(modules...)
			e := pythonExecutor(name, module)
			res, err := harness.Run(context.Background(), loadRx("../scenarios/reference.rx", "../scenarios/error.rx"),
				harness.Options{Executors: []executor.Executor{fallback.Executor{}, e}, SkipLocks: true})
			Expect(err).NotTo(HaveOccurred())
			cases := byExecutor(res.Cases, executor.Name(name))
			Expect(cases).To(HaveLen(3*3 + 2)) // three functions × three batches, one × two
			for _, c := range cases {
				Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
				if c.Function == "score_divisor" {
					// The same stable text as the oracle's.
					Expect(c.Error).To(HavePrefix("score_divisor: CheckedRem: division by zero (round_idx=0) at error.rx:"))
				}
			}
		},
		Entry("NumPy", "author-numpy", "../examples/python/numpy_scoring.py", "numpy"),
		Entry("PyTorch eager", "author-torch", "../examples/python/torch_scoring.py", "numpy", "torch"),
	)

	It("passes its own unit tests (Go's integer semantics, error texts, framing)", func() {
		needPython("numpy")
		out, err := exec.Command(systemPython, "-B", "-m", "unittest", "discover", "-s", "../python").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	})

	It("runs the protocol document's one-page executor (standard library only)", func() {
		needPython()
		script, err := filepath.Abs("../examples/python/minimal_executor.py")
		Expect(err).NotTo(HaveOccurred())
		e, err := external.New(external.Options{Name: "minimal", Command: []string{systemPython, script}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		res, err := harness.Run(context.Background(), loadRx("testdata/echo.rx"),
			harness.Options{Executors: []executor.Executor{e}, Batches: []int{1, 1000}})
		Expect(err).NotTo(HaveOccurred())
		Expect(byExecutor(res.Cases, "minimal")).To(HaveLen(2))
		Expect(res.OK()).To(BeTrue(), "%+v", res.Cases)
	})

	It("keeps what the module prints off the protocol stream", func() {
		needPython("numpy")
		e := pythonExecutor("chatty", "testdata/python/chatty.py")
		res, err := harness.Run(context.Background(), loadRx("testdata/echo.rx"),
			harness.Options{Executors: []executor.Executor{e}, Batches: []int{1, 3}})
		Expect(err).NotTo(HaveOccurred())
		Expect(byExecutor(res.Cases, "chatty")).To(HaveLen(2))
		Expect(res.OK()).To(BeTrue(), "%+v", res.Cases)
	})

	It("reports a function that writes into its input as a failure naming the input", func() {
		needPython("numpy")
		e := pythonExecutor("mutating", "testdata/python/mutating.py")
		files := loadRx("../scenarios/reference.rx")
		res, err := harness.Run(context.Background(), files, harness.Options{Executors: []executor.Executor{e}, SkipLocks: true, Batches: []int{4}})
		Expect(err).NotTo(HaveOccurred())
		for _, c := range byExecutor(res.Cases, "mutating") {
			if c.Function != "score_linear" {
				Expect(c.Status).To(Equal(harness.StatusSkip))
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusFail))
			Expect(c.Error).To(MatchRegexp(`^mutating modified input x \(CRC-32 [0-9a-f]{8} sent, [0-9a-f]{8} after the call\) during score_linear$`))
		}
	})

	It("skips the functions a module does not define, saying which module lacks them", func() {
		needPython("numpy")
		e := pythonExecutor("partial", "testdata/python/partial.py")
		res, err := harness.Run(context.Background(), loadRx("../scenarios/reference.rx"),
			harness.Options{Executors: []executor.Executor{e}, SkipLocks: true, Batches: []int{1}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		for _, c := range byExecutor(res.Cases, "partial") {
			if c.Function == "score_linear" {
				Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusSkip))
			Expect(c.Message).To(MatchRegexp(`^function not served: partial does not serve %s: .*partial\.py defines no function %s$`, c.Function, c.Function))
		}
	})
})

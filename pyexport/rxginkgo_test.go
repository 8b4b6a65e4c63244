package pyexport_test

import (
	"os/exec"

	. "github.com/onsi/ginkgo/v2"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/pyexport"
	"github.com/rextio/rxeq/rxginkgo"
)

// A user's ginkgo suite naming the generated-code executors: every entry
// of the reference and runtime-error scenarios on pytorch, torchscript
// and numpy (skipped without Debian's python3-torch).
var suiteExecutors = func() []executor.Executor {
	var out []executor.Executor
	for _, name := range []executor.Name{executor.PyTorch, executor.TorchScript, executor.NumPy} {
		e, err := pyexport.NewExecutor(name, pyexport.ExecutorOptions{})
		if err != nil {
			panic(err)
		}
		out = append(out, e)
	}
	return out
}()

var _ = Describe("the generated-code executors in a user's rxginkgo table", Ordered, Label("e2e", "python"), func() {
	BeforeAll(func() {
		if err := exec.Command(systemPython, "-c", "import numpy, torch").Run(); err != nil {
			Skip(systemPython + " cannot import numpy and torch (CI installs python3-numpy and python3-torch)")
		}
	})
	AfterAll(func() { executor.CloseAll(suiteExecutors) })

	rxginkgo.TableWith("agree with the oracle", rxginkgo.WithExecutors(suiteExecutors...),
		"../scenarios/reference.rx", "../scenarios/error.rx")
})

package rxginkgo_test

import (
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/rxginkgo"
)

// A user's suite with their own NumPy code as a fourth executor: the
// reference and runtime-error scenarios, through python/rxeq_executor.py
// on Debian's python3 with python3-numpy (skipped without it).
var numpyScoring = rxginkgo.MustExecutor("author-numpy=/usr/bin/python3 ../python/rxeq_executor.py ../examples/python/numpy_scoring.py")

var _ = Describe("an external executor in a user's table", Ordered, Label("e2e", "python"), func() {
	BeforeAll(func() {
		if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
			Skip("/usr/bin/python3 cannot import numpy (CI installs python3-numpy)")
		}
	})
	AfterAll(func() { Expect(numpyScoring.Close()).To(Succeed()) })

	rxginkgo.TableWith("agrees with the NumPy example", rxginkgo.WithExecutors(numpyScoring),
		"../scenarios/reference.rx", "../scenarios/error.rx")
})

var _ = Describe("SkipReason", func() {
	It("lists the skipped cases with their reasons, and nothing when none was skipped", func() {
		res := &harness.Result{Cases: []harness.Case{
			{Scenario: "s", Function: "f", Batch: 1, Executor: "oracle", Status: harness.StatusPass},
			{Scenario: "s", Function: "f", Batch: 1, Executor: "np", Status: harness.StatusSkip, Message: "function not served: np does not serve f (it serves g)"},
		}}
		Expect(rxginkgo.SkipReason(res)).To(Equal("s/f/b1/np: function not served: np does not serve f (it serves g)"))
		Expect(res.OK()).To(BeTrue())
		res.Cases = res.Cases[:1]
		Expect(rxginkgo.SkipReason(res)).To(BeEmpty())
	})

	It("parses NAME=COMMAND and refuses a spec without a name", func() {
		e, err := rxginkgo.Executor("np=/usr/bin/python3 a.py")
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Name()).To(Equal(executor.Name("np")))
		Expect(e.Command()).To(Equal([]string{"/usr/bin/python3", "a.py"}))
		_, err = rxginkgo.Executor("/usr/bin/python3 a.py")
		Expect(err).To(MatchError(harness.ErrOptions))
	})
})

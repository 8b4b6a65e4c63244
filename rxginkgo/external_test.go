package rxginkgo_test

import (
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
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

var _ = Describe("choosing the executors of a table", func() {
	src := []byte("//rx:scenario pick\n//rx:batches 2\n//rx:input x normal(0, 1)\npackage p\n\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x)\n\treturn\n}\n")
	names := func(opts harness.Options) []string {
		f, err := program.ParseScenario("pick.rx", src)
		Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, c := range rxginkgo.PlannedCases([]*program.File{f}, opts) {
			out = append(out, string(c.Executor))
		}
		return out
	}
	mine := renamed{fallback.Executor{}, "mine"}

	It("WithExecutors keeps every default executor, torch included (skipped with its reason when libtorch is missing), and adds yours once", func() {
		want := []string{}
		for _, n := range builtin.DefaultNames() {
			want = append(want, string(n))
		}
		got := names(rxginkgo.WithExecutors(mine))
		Expect(got).To(ConsistOf(append(want, "mine")))
		Expect(got).To(ContainElement(string(executor.Torch)))
	})

	It("OnlyExecutors compares just yours, so a second table does not repeat the defaults' entries", func() {
		Expect(names(rxginkgo.OnlyExecutors(mine))).To(Equal([]string{"mine"}))
	})
})

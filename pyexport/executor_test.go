package pyexport_test

import (
	"context"
	"errors"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/pyexport"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("the generated-code executors", Label("python", "slow"), func() {
	It("run the whole catalog, the edge scenarios included, within tolerance of the oracle, with the oracle's error texts", func() {
		needPython("numpy", "torch")
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		sel, err := builtin.Select([]executor.Name{executor.PyTorch, executor.TorchScript, executor.NumPy}, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(sel.Close)
		Expect(sel.Unavailable).To(BeEmpty())
		res, err := harness.Run(context.Background(), files, harness.Options{Executors: sel.Executors,
			SkipLocks: true, Backends: []executor.Name{executor.PyTorch, executor.TorchScript, executor.NumPy}})
		Expect(err).NotTo(HaveOccurred())
		per := map[executor.Name]int{}
		errs := map[executor.Name]int{}
		for _, c := range res.Cases {
			per[c.Executor]++
			if c.Status == harness.StatusFail {
				sigmoidUnderflowOnly(c)
			} else {
				Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
			}
			Expect(c.Path).To(Equal(c.Executor))
			if c.Error != "" {
				errs[c.Executor]++
				Expect(c.Error).To(MatchRegexp(`^\w+: Checked(Rem|Div): (division by zero|integer overflow) \(`))
			}
		}
		Expect(per).To(HaveLen(3))
		Expect(per[executor.PyTorch]).To(BeNumerically(">=", 50))
		Expect(per[executor.TorchScript]).To(Equal(per[executor.PyTorch]))
		Expect(per[executor.NumPy]).To(Equal(per[executor.PyTorch]))
		Expect(errs[executor.PyTorch]).To(BeNumerically(">", 0))
		Expect(errs[executor.TorchScript]).To(Equal(errs[executor.PyTorch]))
		Expect(errs[executor.NumPy]).To(Equal(errs[executor.PyTorch]))
		// The preparations name the versions the Python side runs.
		for _, pr := range res.Preparations {
			if pr.Executor == executor.Oracle {
				continue
			}
			Expect(pr.Framework).To(MatchRegexp(`^numpy \d[^,]*, python 3\.`), string(pr.Executor))
			if pr.Executor != executor.NumPy {
				Expect(pr.Framework).To(MatchRegexp(`, torch \d`), string(pr.Executor))
			}
		}
	})

	It("fail a TorchScript-checked division by zero with rxeq's error, not a SIGFPE", func() {
		needPython("numpy", "torch")
		f, err := program.Parse("z.rx", []byte(`package z
func f(x [B]float32, d int64) (y [B]float32) {
	y = x
	if CheckedDiv(7, d) == 0 && CheckedRem(7, d) == 0 {
		y = x * 2.0
	}
	return
}

func g(x [B]float32, d int64) (y [B]float32) {
	y = x
	if d == 1 || CheckedRem(-9223372036854775807-1, -1) == 0 && CheckedDiv(-9223372036854775807-1, -1) == 1 {
		y = x * 2.0
	}
	return
}
`))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []executor.Name{executor.PyTorch, executor.TorchScript, executor.NumPy} {
			e, err := pyexport.NewExecutor(name, pyexport.ExecutorOptions{})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(e.Close)
			prep, err := e.Prepare(context.Background(), f, p)
			Expect(err).NotTo(HaveOccurred())
			in := map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{1, 2, 3}, 3)}
			in["d"] = tensor.Scalar(0)
			_, err = prep.Run(context.Background(), "f", in)
			var re *ir.RuntimeError
			Expect(errors.As(err, &re)).To(BeTrue(), "%s: %v", name, err)
			Expect(err).To(MatchError("f: CheckedDiv: division by zero (dividend=7) at z.rx:4:5"), string(name))
			in["d"] = tensor.Scalar(7)
			out, err := prep.Run(context.Background(), "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Outputs).To(HaveKey("y"))
			// Constant operands: TorchScript folds a // b even behind a
			// raise, so the division must sit in an else branch.
			in["d"] = tensor.Scalar(0)
			_, err = prep.Run(context.Background(), "g", in)
			Expect(err).To(MatchError("g: CheckedDiv: integer overflow (-9223372036854775807 - 1=-9223372036854775808, divisor -1) at z.rx:12:62"), string(name))
			Expect(prep.Close()).To(Succeed())
		}
	})

	It("report PyTorch's relu(-0) = -0 (a framework difference, docs/python.md): 1 / Relu(-0) fails on pytorch and torchscript, passes on numpy", func() {
		needPython("numpy", "torch")
		f, _ := load("testdata/relu_negzero.rx")
		sel, err := builtin.Select([]executor.Name{executor.PyTorch, executor.TorchScript, executor.NumPy}, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(sel.Close)
		res, err := harness.Run(context.Background(), []*program.File{f}, harness.Options{Executors: sel.Executors,
			Backends: []executor.Name{executor.PyTorch, executor.TorchScript, executor.NumPy}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(3))
		for _, c := range res.Cases {
			if c.Executor == executor.NumPy {
				Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusFail), c.Name())
			Expect(c.Message).To(ContainSubstring("want +Inf got -Inf"))
		}
	})

	It("are unavailable, with the reason, when the interpreter lacks the framework or is missing", func() {
		err := pyexport.Available(executor.PyTorch, "/nonexistent/python3")
		Expect(errors.Is(err, pyexport.ErrUnavailable)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("cannot run /nonexistent/python3")))
		Expect(err).To(MatchError(ContainSubstring("RXEQ_PYTHON")))
		sel, err := builtin.Select([]executor.Name{executor.NumPy}, builtin.Config{}.FromEnv(func(k string) string {
			if k == builtin.EnvPython {
				return "/nonexistent/python3"
			}
			return os.Getenv(k)
		}), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(BeEmpty())
		Expect(sel.Unavailable).To(HaveLen(1))
		Expect(sel.Unavailable[0].Reason).To(ContainSubstring("numpy is unavailable: cannot run /nonexistent/python3"))
	})
})

// sigmoidUnderflowOnly checks a failed catalog case: it must be
// op-accuracy/sigmoid_underflow failing on sigmoid_under (ATen's, and NumPy
// code's, Sigmoid is 0 below -88.7 instead of a subnormal), and the
// checked-in ledger must have that executor's entry for it.
func sigmoidUnderflowOnly(c harness.Case) {
	GinkgoHelper()
	Expect(c.Scenario+"/"+c.Function).To(Equal("op-accuracy/sigmoid_underflow"), c.Name()+": "+c.Message)
	var failing []string
	for _, o := range c.Outputs {
		if !o.OK {
			failing = append(failing, o.Name)
		}
	}
	Expect(failing).To(Equal([]string{"sigmoid_under"}), c.Name()+": "+c.Message)
	e := ledger.Default().Match(ledger.Case{Executor: string(c.Executor), Category: "accuracy", Ops: []string{"Sigmoid"},
		Values: "finite", Output: "sigmoid_under", Scenario: c.Scenario})
	Expect(e).NotTo(BeNil(), c.Name())
	Expect(e.ID).To(Equal(string(c.Executor) + "-sigmoid-underflow"))
}

package harness_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("//rx:tolerance … for=EXECUTOR", func() {
	// oneULP is the fallback with one element of y moved 1 float32 ULP;
	// the fallback itself is correctly rounded here (Tanh rounded once).
	oneULP := hookExecutor{name: "one-ulp", inner: fallback.Executor{},
		after: func(_ string, _ map[string]*tensor.Tensor, out *executor.Outcome, err *error) {
			if *err == nil {
				y := out.Outputs["y"]
				y.F32[0] = math.Float32frombits(math.Float32bits(y.F32[0]) + 1)
			}
		}}
	src := func(dirs string) string {
		return "//rx:scenario per-exec\n//rx:batches 2\n//rx:input x uniform(0.5, 1)\n" + dirs +
			"package p\n\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x)\n\treturn\n}\n"
	}
	run := func(dirs string) *harness.Result {
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}, oneULP}}
		res, err := harness.Run(context.Background(), []*program.File{parseRx("per-exec.rx", src(dirs))}, opts)
		Expect(err).NotTo(HaveOccurred())
		return res
	}
	byExec := func(res *harness.Result, name string) harness.Case {
		for _, c := range res.Cases {
			if string(c.Executor) == name {
				return c
			}
		}
		Fail("no case for " + name)
		return harness.Case{}
	}

	It("holds every executor to the general bound and the named one to its own", func() {
		res := run("//rx:tolerance y ulp=0\n")
		Expect(byExec(res, "fallback").Status).To(Equal(harness.StatusPass))
		c := byExec(res, "one-ulp")
		Expect(c.Status).To(Equal(harness.StatusFail))
		Expect(c.Message).To(ContainSubstring("y: 1 / 8 mismatched"))

		res = run("//rx:tolerance y ulp=1 for=one-ulp\n//rx:tolerance y ulp=0\n")
		Expect(byExec(res, "fallback").Status).To(Equal(harness.StatusPass))
		Expect(byExec(res, "fallback").Tolerances["y"].ULP).To(Equal(int64(0)))
		c = byExec(res, "one-ulp")
		Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
		Expect(c.Tolerances["y"].ULP).To(Equal(int64(1)))
	})

	It("does not loosen the bound of an executor it does not name", func() {
		res := run("//rx:tolerance y ulp=0\n//rx:tolerance y ulp=1 for=fallback\n")
		Expect(byExec(res, "fallback").Tolerances["y"].ULP).To(Equal(int64(1)))
		c := byExec(res, "one-ulp")
		Expect(c.Status).To(Equal(harness.StatusFail))
		Expect(c.Tolerances["y"].ULP).To(Equal(int64(0)))
	})
})

package fuzz_test

import (
	"context"
	"math"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
)

var _ = Describe("float32 rounding noise", func() {
	ctx := context.Background()

	// testdata/noise holds programs the fuzzer reported before the
	// checker measured rounding noise: each disagrees at the plain
	// tolerance because it is ill-conditioned in float32, not because an
	// executor is wrong (the comment in each file says why).
	files, _ := filepath.Glob("testdata/noise/*.rx")
	for _, path := range files {
		name := filepath.Base(path)
		It("excuses "+name+", which float32 cannot compute closer, and only with the noise runs", func() {
			src, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			plain := &fuzz.Checker{NoiseRuns: -1}
			rep, err := plain.Check(ctx, src)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.OK()).To(BeFalse(), "the program agrees at the plain tolerance: it proves nothing")
			Expect(rep.Excused).To(BeZero())

			rep, err = fuzz.Check(ctx, src, allExecutors()...)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Findings).To(BeEmpty())
			Expect(rep.Excused).To(BeNumerically(">", 0))
		})
	}

	It("has programs to excuse", func() {
		Expect(len(files)).To(BeNumerically(">=", 4))
	})

	It("excuses nothing in a well-conditioned program, so a skewed executor is still caught", func() {
		rep, err := fuzz.Check(ctx, []byte(twoFuncs))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeTrue())
		Expect(rep.Excused).To(BeZero())

		rep, err = fuzz.Check(ctx, []byte(twoFuncs), skewed{name: "skewed", delta: 2e-3})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeFalse())
		Expect(rep.Findings[0].Kind).To(Equal(fuzz.KindMismatch))
		Expect(rep.Excused).To(BeZero())
	})

	It("is deterministic: two checks of a program excuse as many elements", func() {
		src, err := os.ReadFile("testdata/noise/chaotic_tanh_map.rx")
		Expect(err).NotTo(HaveOccurred())
		a, err := (&fuzz.Checker{}).Check(ctx, src)
		Expect(err).NotTo(HaveOccurred())
		b, err := (&fuzz.Checker{Executors: []executor.Executor{fallback.Executor{}}}).Check(ctx, src)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Excused).To(BeNumerically(">", 0))
		Expect(b).To(Equal(a))
	})

	It("measures the noise around the oracle's exact result, so a wrong reference is not excused", func() {
		// A reference 0.05 off on a well-conditioned program: measured
		// around the reference the noise would look 0.05 wide.
		c := &fuzz.Checker{Reference: offsetOracle{delta: 0.05}}
		rep, err := c.Check(ctx, []byte(twoFuncs))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeFalse())
		Expect(rep.Excused).To(BeZero())
	})

	It("excuses only values rounding produced: NaN where noise gives NaN, not +Inf", func() {
		// Exact -Inf, float32 NaN (0 · -Inf after an underflow).
		src, err := os.ReadFile("testdata/noise/underflow_times_inf.rx")
		Expect(err).NotTo(HaveOccurred())
		rep, err := fuzz.Check(ctx, src, constant{name: "nan", out: "out2", v: float32(math.NaN())})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(BeEmpty())
		Expect(rep.Excused).To(BeNumerically(">", 0))

		rep, err = fuzz.Check(ctx, src, constant{name: "inf", out: "out2", v: float32(math.Inf(1))})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.OK()).To(BeFalse())
		Expect(rep.Findings[0].Output).To(Equal("out2"))
	})
})

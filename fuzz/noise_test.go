package fuzz_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
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

	It("is deterministic: the same program excuses the same elements", func() {
		src, err := os.ReadFile("testdata/noise/chaotic_tanh_map.rx")
		Expect(err).NotTo(HaveOccurred())
		a, err := fuzz.Check(ctx, src)
		Expect(err).NotTo(HaveOccurred())
		b, err := fuzz.Check(ctx, src, harness.FallbackExecutor{})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Excused).To(Equal(b.Excused))
	})
})

package fuzz_test

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/onnx/ort"
)

var _ = Describe("a finding of ONNX Runtime", func() {
	// The CI campaign's seed 43 (docs/findings.md), as drawn before the
	// forlocal feature (excluded, so the program stays the same): an edge-seeking
	// program in which ONNX Runtime's Max returns its second operand of
	// two zeros, Maximum(+0, -0) = -0, made observable by a division.
	It("is saved with the standalone repro.py of ortrepro, which exits 1", func() {
		lib := os.Getenv("RXEQ_ORT_LIB")
		if _, err := ort.Find(lib); err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail(err.Error())
			}
			Skip(err.Error())
		}
		dir := GinkgoT().TempDir()
		c := fuzz.Campaign{Seed: 43, Count: 1, Config: fuzz.Config{Edges: true, Exclude: fuzz.FeatForLocal}, Dir: dir, Reducer: fuzz.Reducer{MaxTests: 6},
			Checker: &fuzz.Checker{Executors: []executor.Executor{ort.Executor{Library: lib, Level: ort.Optimize}}}}
		st, out, _ := session(c)
		Expect(st.Records).To(HaveLen(1), out)
		rec := st.Records[0]
		Expect(rec.Executor).To(Equal(string(executor.ONNXRuntime)))
		Expect(rec.Category).To(Equal(fuzz.CatSignedZero))
		Expect(rec.Repro).To(Equal("repro.py"))
		Expect(out).To(ContainSubstring(filepath.Join("DIR", rec.ID, "repro.py")))
		cmd := exec.Command("/usr/bin/python3", "-B", filepath.Join(dir, rec.ID, "repro.py"))
		text, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		Expect(err).To(BeAssignableToTypeOf(ee), string(text))
		Expect(err.(*exec.ExitError).ExitCode()).To(Equal(1), string(text))
		Expect(string(text)).To(ContainSubstring("ONNX Runtime 1.30.0 (OPT_LEVEL 99)"))
		Expect(string(text)).To(MatchRegexp(`want (-?inf|-?0\.0) \(0x[0-9a-f]{16}\) got -?(inf|0\.0) \(0x[0-9a-f]{8}\)`))
		Expect(string(text)).To(ContainSubstring("REPRODUCED"))
	})
})

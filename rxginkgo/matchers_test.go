package rxginkgo_test

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/rxginkgo"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("matchers", func() {
	tol := compare.Tolerance{RTol: 1e-5, ATol: 1e-5}

	It("BeWithinTolerance accepts a close output and prints the mismatch report otherwise", func() {
		want := tensor.FromFloat64([]float64{0.25, 0.75}, 1, 2)
		Expect(tensor.FromFloat32([]float32{0.25, 0.750001}, 1, 2)).To(rxginkgo.BeWithinTolerance(want, tol))
		m := rxginkgo.BeWithinTolerance(want, tol)
		ok, err := m.Match(tensor.FromFloat32([]float32{0.25, 0.8}, 1, 2))
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		Expect(m.FailureMessage(nil)).To(HavePrefix("output: 1 / 2 mismatched (50.0%); greatest abs diff"))
		Expect(m.FailureMessage(nil)).To(ContainSubstring("[0 1] want 0.75 got 0.8"))
	})

	It("SatisfyLocks is scoped to the function: a decoy's loop does not count", func() {
		src, err := os.ReadFile("testdata/badlock.rx")
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse("badlock.rx", src)
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		csrc, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(csrc)).To(ContainSubstring("round_idx < 4"), "the decoy has the loop")
		m := rxginkgo.SatisfyLocks(f.Func("score"))
		ok, err := m.Match(csrc)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		Expect(m.FailureMessage(nil)).To(ContainSubstring("rx_fn_score"))
		Expect(m.FailureMessage(nil)).To(ContainSubstring("round_idx < 3"))
	})

	It("Pass lists failing cases and locks", Label("native"), func() {
		entries, err := rxginkgo.Entries("testdata/badlock.rx")
		Expect(err).NotTo(HaveOccurred())
		// Two functions at one batch, one entry per executor (fallback,
		// native, torch whether or not libtorch is here).
		Expect(entries).To(HaveLen(6))
		f, err := program.Parse("badlock.rx", mustRead("testdata/badlock.rx"))
		Expect(err).NotTo(HaveOccurred())
		res, err := rxginkgo.Run(context.Background(), rxginkgo.Case{File: f, Function: "score", Batch: 2})
		Expect(err).NotTo(HaveOccurred())
		m := rxginkgo.Pass()
		ok, err := m.Match(res)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		Expect(m.FailureMessage(nil)).To(HavePrefix("LOCK bad-lock/score:"))
		res, err = rxginkgo.Run(context.Background(), rxginkgo.Case{File: f, Function: "decoy", Batch: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(rxginkgo.Pass())
	})

	It("makes a file that does not check one failing entry, not a panic of the container", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(dir+"/bad.rx", []byte("package p\nfunc f(x [B]float64) (y [B]float32) { y = x; return }\n"), 0o644)).To(Succeed())
		var entries []TableEntry
		Expect(func() { entries = rxginkgo.MustEntries(dir) }).NotTo(Panic())
		Expect(entries).To(HaveLen(1))
		_, err := program.ParseScenario(dir+"/bad.rx", mustRead(dir+"/bad.rx"))
		Expect(err).To(HaveOccurred())
		failures := InterceptGomegaFailures(func() { rxginkgo.AssertCase(rxginkgo.Case{Err: err}) })
		Expect(failures).To(HaveLen(1))
		Expect(failures[0]).To(ContainSubstring("bad.rx:2:13: unsupported element type float64"))
	})
})

func mustRead(path string) []byte {
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return b
}

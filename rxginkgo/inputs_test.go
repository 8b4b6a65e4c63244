package rxginkgo_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/rxginkgo"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

const inputsSrc = `//rx:scenario from-data
//rx:batches 1
//rx:input x normal(0, 1)
package p

func f(x [B][2]float32) (y [B][2]float32) {
	y = Tanh(x) * 2
	return
}

func g(x [B][3]float32) (y [B][3]float32) {
	y = x + 1
	return
}
`

var _ = Describe("entries with Options.Inputs", func() {
	It("makes one entry per batch of data, runs it on the files, and one failing entry for a bad file", func() {
		dir := GinkgoT().TempDir()
		rx := filepath.Join(dir, "p.rx")
		Expect(os.WriteFile(rx, []byte(inputsSrc), 0o644)).To(Succeed())
		in := filepath.Join(dir, "in")
		for _, n := range []int{3, 5} {
			Expect(os.MkdirAll(filepath.Join(in, "from-data/f", "b"+string(rune('0'+n)), "inputs"), 0o755)).To(Succeed())
			x := tensor.NewFloat32(n, 2)
			for i := range x.F32 {
				x.F32[i] = float32(i) - 2
			}
			Expect(npy.WriteFile(filepath.Join(in, "from-data/f", "b"+string(rune('0'+n)), "inputs/x.npy"), x)).To(Succeed())
		}
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}}, Inputs: in}
		entries, err := rxginkgo.EntriesWith(opts, rx)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(3)) // f at b3 and b5 from the files, g at //rx:batches 1 generated
		plain, err := rxginkgo.EntriesWith(harness.Options{Executors: opts.Executors}, rx)
		Expect(err).NotTo(HaveOccurred())
		Expect(plain).To(HaveLen(2))

		f, err := program.ParseScenario(rx, []byte(inputsSrc))
		Expect(err).NotTo(HaveOccurred())
		res, err := rxginkgo.Run(context.Background(), rxginkgo.Case{File: f, Function: "f", Batch: 5, Options: opts, Executor: "fallback"})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(rxginkgo.Pass())
		Expect(res.Cases[0].Name()).To(Equal("from-data/f/b5/oracle"))
		Expect(res.Replays[0].Files).To(HaveKeyWithValue("x", filepath.Join(in, "from-data/f/b5/inputs/x.npy")))

		Expect(os.MkdirAll(filepath.Join(in, "g"), 0o755)).To(Succeed())
		Expect(npy.WriteFile(filepath.Join(in, "g/x.npy"), tensor.NewFloat64(2, 3))).To(Succeed())
		entries, err = rxginkgo.EntriesWith(opts, rx)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(3)) // g is now one failing entry
		_, err = harness.InputGroups(in, f, f.Func("g"), nil)
		failures := InterceptGomegaFailures(func() { rxginkgo.AssertCase(rxginkgo.Case{Err: err}) })
		Expect(failures).To(HaveLen(1))
		Expect(failures[0]).To(ContainSubstring("the input files cannot be used"))
		Expect(failures[0]).To(ContainSubstring("g/x.npy: parameter x of g is float32, the file holds float64"))
	})
})

var _ = Describe("entries with an Options.Inputs directory that holds nothing", func() {
	It("makes one failing entry, as rxeq run exits 2, instead of passing on generated inputs", func() {
		dir := GinkgoT().TempDir()
		f, err := program.ParseScenario(filepath.Join(dir, "p.rx"), []byte(inputsSrc))
		Expect(err).NotTo(HaveOccurred())
		for _, in := range []string{filepath.Join(dir, "misspelt"), dir} {
			opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}}, Inputs: in}
			cases := rxginkgo.PlannedCases([]*program.File{f}, opts)
			Expect(cases).To(HaveLen(3), in) // f and g on generated inputs, and the failing entry
			bad := cases[2]
			Expect(bad.String()).To(Equal("input files"))
			Expect(bad.Err).To(MatchError(harness.ErrInputs))
			Expect(bad.Err.Error()).To(ContainSubstring(in + ": no .npy file for any parameter of the functions run"))
			failures := InterceptGomegaFailures(func() { rxginkgo.AssertCase(bad) })
			Expect(failures).To(HaveLen(1))
			Expect(failures[0]).To(HavePrefix("the input files cannot be used:\n"))
		}
	})
})

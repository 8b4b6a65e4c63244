package main

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor/npy"
)

var _ = Describe("rxeq sweep", func() {
	naive := func() string {
		script, _ := filepath.Abs("testdata/sweep/naive_softmax.py")
		return "naive=/usr/bin/python3 " + script
	}

	It("finds the user's softmax overflow on an edge kind, shrinks it to one row of simple values and writes it for --inputs", func() {
		dir := GinkgoT().TempDir()
		code, out, errOut := rxeq("sweep", "--backend", "naive", "--executor", naive(), "--seeds", "20", "--out", dir, "testdata/sweep/softmax.rx")
		Expect(code).To(Equal(exitFail), out+errOut)
		Expect(out).To(MatchRegexp(`FAIL mine/probs/b8 through naive: seed \d+, inputs from edge\(large\), after \d+ cases:`))
		Expect(out).To(ContainSubstring("shrunk in "))
		Expect(out).To(ContainSubstring("to 1 row(s):\n    x [1 4] = [0 10000 0 0]\n    p: 1 / 4 mismatched"))
		Expect(out).To(ContainSubstring("replay: rxeq run --inputs " + dir + " --backend naive --executor"))
		t, err := npy.ReadFile(filepath.Join(dir, "mine", "probs", "x.npy"))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.F32).To(Equal([]float32{0, 10000, 0, 0}))
		// The replay fails the same way.
		code, out, _ = rxeq("run", "--inputs", dir, "--backend", "naive", "--executor", naive(), "testdata/sweep/softmax.rx")
		Expect(code).To(Equal(exitFail))
		Expect(out).To(ContainSubstring("[0 1] want 1 got NaN"))
	})

	It("passes what agrees on every seed and says how much it tried", func() {
		code, out, errOut := rxeq("sweep", "--backend", "fallback", "--seeds", "16", "--edges", "ties,zeros", "testdata/sweep/softmax.rx")
		Expect(code).To(Equal(exitOK), out+errOut)
		Expect(out).To(Equal("PASS mine/probs through fallback: 16 cases (16 seeds, the file's distributions and edge(ties|zeros))\n"))
	})

	It("refuses a missing --backend, an unknown edge kind, a function the file lacks", func() {
		code, _, _ := rxeq("sweep", "testdata/sweep/softmax.rx")
		Expect(code).To(Equal(exitUsage))
		code, _, errOut := rxeq("sweep", "--backend", "fallback", "--edges", "big", "testdata/sweep/softmax.rx")
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring(`unknown edge kind "big"`))
		code, _, errOut = rxeq("sweep", "--backend", "fallback", "--func", "nope", "testdata/sweep/softmax.rx")
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring("has no function nope"))
	})
})

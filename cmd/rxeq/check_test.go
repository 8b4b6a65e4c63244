package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// good is a scenario every rule accepts; the cases below break one rule
// each. Its function is on line 4.
const good = "//rx:input x normal(0, 1)\n//rx:input n const(3)\npackage p\nfunc f(x [B][4]float32, n int64) (y [B][4]float32) { y = x; for range n { y = Tanh(y) }; return }\n"

var _ = Describe("check and run agree", Label("e2e"), func() {
	// writeRx writes src to a fresh NAME.rx and returns its path.
	writeRx := func(name, src string) string {
		path := filepath.Join(GinkgoT().TempDir(), name+".rx")
		Expect(os.WriteFile(path, []byte(src), 0o600)).To(Succeed())
		return path
	}

	DescribeTable("on every static rule: both exit 2 with the same positioned errors, or both accept",
		func(src string, want []string) {
			path := writeRx("t", src)
			checkCode, checkOut, checkErr := rxeq("check", path)
			runCode, runOut, runErr := rxeq("run", "--backend", "oracle,fallback", path)
			if want == nil {
				Expect(checkCode).To(Equal(exitOK), checkErr)
				Expect(checkOut).To(HaveSuffix(": ok (f)\n"))
				Expect(runCode).To(Equal(exitOK), runOut+runErr)
				return
			}
			Expect(checkCode).To(Equal(exitUsage), checkOut)
			Expect(runCode).To(Equal(exitUsage), runOut)
			Expect(runOut).To(BeEmpty())
			var lines []string
			for _, w := range want {
				lines = append(lines, path+":"+w)
			}
			Expect(strings.Split(strings.TrimSpace(checkErr), "\n")).To(Equal(lines))
			Expect(runErr).To(Equal(checkErr))
		},
		Entry("a good scenario", good, nil),
		Entry("a loop bound that is a negative literal runs no iteration, as in Go",
			"//rx:input x normal(0, 1)\npackage p\nfunc f(x [B]float32) (y [B]float32) { y = x; for range -3 { y = Tanh(y) }; return }\n", nil),
		Entry("a loop bound that is a negative constant, likewise",
			"//rx:input x normal(0, 1)\npackage p\nconst N = -3\nfunc f(x [B]float32) (y [B]float32) { y = x; for range N { y = Tanh(y) }; return }\n", nil),
		Entry("a constant loop-bound expression",
			"//rx:input x normal(0, 1)\npackage p\nconst N = 3\nfunc f(x [B]float32) (y [B]float32) { y = x; for range 1 - 2*N { y = Tanh(y) }; return }\n", nil),
		Entry("an int64 input above 2^53", strings.Replace(good, "const(3)", "const(9007199254740994)", 1),
			[]string{"2:1: //rx:input n: an int64 parameter takes const(N) with an integer N between -2^53 and 2^53 (distribution arguments are float64, exact up to 2^53)"}),
		Entry("a second symbolic dimension, which nothing binds",
			"//rx:input x normal(0, 1)\npackage p\nfunc f(x [B][K]float32) (y [B][K]float32) { y = Tanh(x); return }\n",
			[]string{"3:14: symbolic dimension K of f has no value when it runs: only the batch dimension B takes its sizes (from //rx:batches); give K a size, like const K = 16"}),
		Entry("a parameter without //rx:input", strings.Replace(good, "//rx:input x normal(0, 1)\n", "", 1),
			[]string{"3:8: parameter x of f has no //rx:input directive: add one like //rx:input x normal(0, 1)"}),
		Entry("two parameters without //rx:input: every error, in position order", "package p\nfunc f(x [B][4]float32, n int64) (y [B][4]float32) { y = x; for range n { y = Tanh(y) }; return }\n",
			[]string{
				"2:8: parameter x of f has no //rx:input directive: add one like //rx:input x normal(0, 1)",
				"2:25: parameter n of f has no //rx:input directive: add one like //rx:input n const(4)",
			}),
		Entry("an int64 tensor parameter", "//rx:input k const(1)\npackage p\nfunc f(k [B]int64) (y [B]int64) { y = k; return }\n",
			[]string{"3:8: parameter k of f is an int64 tensor ([B]int64): a scenario's inputs are generated, as float32 tensors or int64 scalars only"}),
		Entry("a file with only a package clause", "package p\n",
			[]string{"1:1: no scoring function: a scenario needs at least one func, like func score(x [B][F]float32) (y [B][C]float32)"}),
		Entry("a dimension whose element count overflows at the batch",
			"//rx:batches 1 8\n//rx:input x normal(0, 1)\npackage p\nconst H = 4611686018427387904\nfunc f(x [B][H]float32) (y [B][H]float32) { y = Tanh(x); return }\n",
			[]string{"5:8: shape [B][4611686018427387904]float32 of parameter x has 8 × 4611686018427387904 ≈ 2^65 elements at batch B = 8 (the largest of //rx:batches): more than the 2^60 - 1 a tensor may hold, so that its size in bytes (8 per element) fits in int64; make its dimensions or the batches smaller"}),
	)

	It("refuses /dev/zero and a FIFO in check and run, without reading them", func() {
		fifo := filepath.Join(GinkgoT().TempDir(), "pipe.rx")
		Expect(syscall.Mkfifo(fifo, 0o600)).To(Succeed())
		for _, path := range []string{"/dev/zero", fifo} {
			for _, cmd := range []string{"check", "run"} {
				code, _, errOut := rxeq(cmd, path)
				Expect(code).To(Equal(exitUsage), cmd+" "+path)
				Expect(errOut).To(MatchRegexp(`^rxeq: .*: not a regular file \(a (character device|named pipe)\): rxeq reads .rx source files only\n$`))
			}
		}
	})
})

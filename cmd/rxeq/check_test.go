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
		Entry("a local declared and not used, as Go says it (a later assignment is not a use)",
			"//rx:input x normal(0, 1)\npackage p\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\teps := 1e-5\n\tz := Tanh(x)\n\tz = Exp(x)\n\tw := x\n\ty = w\n\treturn\n}\n",
			[]string{"4:2: declared and not used: eps", "5:2: declared and not used: z"}),
		Entry("a local read in a nested block or a loop variable only a lock names are used",
			"//rx:input x normal(0, 1)\npackage p\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ts := 0.5\n\ty = x\n\tfor i := range 3 {\n\t\tif 1 > 0 {\n\t\t\ty = y * s\n\t\t}\n\t}\n\treturn\n}\n", nil),
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

var _ = Describe("two files with one scenario name", func() {
	// Two directories each with a scorer.rx: both scenarios are called
	// "scorer" (no //rx:scenario), so their cases could not be told apart.
	twoDirs := func() (a, b string) {
		root := GinkgoT().TempDir()
		a, b = filepath.Join(root, "a", "scorer.rx"), filepath.Join(root, "b", "scorer.rx")
		for _, p := range []string{a, b} {
			Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
			Expect(os.WriteFile(p, []byte(good), 0o600)).To(Succeed())
		}
		return a, b
	}

	It("are refused by check, list, lock and run, naming both files", func() {
		a, b := twoDirs()
		for _, cmd := range [][]string{{"check"}, {"list"}, {"lock"}, {"run", "--backend", "fallback"}} {
			code, _, errOut := rxeq(append(cmd, a, b)...)
			Expect(code).To(Equal(exitUsage), cmd[0])
			Expect(errOut).To(ContainSubstring(`scenario "scorer": declared by `+a+" and "+b), cmd[0])
			Expect(errOut).To(ContainSubstring("//rx:scenario NAME"), cmd[0])
		}
	})

	It("include one file given twice", func() {
		a, _ := twoDirs()
		code, _, errOut := rxeq("run", "--backend", "fallback", a, filepath.Dir(a))
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring(`scenario "scorer": ` + a + " is given 2 times"))
	})
})

var _ = Describe("rxeq check on a directory", func() {
	It("checks every .rx file under it, as run, list and lock do", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "one.rx"), []byte(good), 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "two.rx"), []byte(good), 0o600)).To(Succeed())
		code, out, errOut := rxeq("check", dir)
		Expect(code).To(Equal(exitOK), errOut)
		Expect(out).To(Equal(filepath.Join(dir, "one.rx") + ": ok (f)\n" + filepath.Join(dir, "two.rx") + ": ok (f)\n"))
	})
})

var _ = Describe("rxeq run's output paths and ULP bound", func() {
	It("creates the directory of --json and --junit, as --dump does", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "t.rx")
		Expect(os.WriteFile(path, []byte(good), 0o600)).To(Succeed())
		js, ju := filepath.Join(dir, "out", "r.json"), filepath.Join(dir, "out", "x", "j.xml")
		code, out, errOut := rxeq("run", "--backend", "fallback", "--json", js, "--junit", ju, path)
		Expect(code).To(Equal(exitOK), out+errOut)
		Expect(js).To(BeAnExistingFile())
		Expect(ju).To(BeAnExistingFile())
	})

	It("takes --max-ulp and refuses a negative bound", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "t.rx")
		Expect(os.WriteFile(path, []byte(good), 0o600)).To(Succeed())
		code, out, errOut := rxeq("run", "--backend", "fallback", "--max-ulp", "64", "--json", filepath.Join(dir, "r.json"), path)
		Expect(code).To(Equal(exitOK), out+errOut)
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(MatchRegexp(`"ulp":\s*64`))
		code, _, errOut = rxeq("run", "--max-ulp", "-1", path)
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring("--max-ulp -1: want 0 (no bound) or a positive number"))
	})
})

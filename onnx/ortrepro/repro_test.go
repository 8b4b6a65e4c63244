package ortrepro_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/repro"
	"github.com/rextio/rxeq/onnx/ortrepro"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// script writes the reproducer of executor e on function fn of p.
func script(p *ir.Program, e executor.Name, fn string, in map[string]*tensor.Tensor, signedZeros bool) []byte {
	GinkgoHelper()
	b, err := ortrepro.Repro(p, ortrepro.Options{
		Options:     repro.Options{Executor: e, Func: fn, Inputs: in, Version: "test"},
		SignedZeros: signedZeros,
	})
	Expect(err).NotTo(HaveOccurred())
	return b
}

var _ = Describe("Repro", func() {
	It("refuses an executor that is not ONNX Runtime's, and a function the program lacks", func() {
		p, in := load("../../ledger/programs/ort-reducemax-nan.rx", "f", 3)
		_, err := ortrepro.Repro(p, ortrepro.Options{Options: repro.Options{Executor: executor.NumPy, Func: "f", Inputs: in}})
		Expect(err).To(MatchError(ortrepro.ErrRepro))
		_, err = ortrepro.Repro(p, ortrepro.Options{Options: repro.Options{Executor: executor.ONNXRuntime, Func: "g", Inputs: in}})
		Expect(err).To(MatchError(ortrepro.ErrRepro))
	})

	It("writes the same bytes for the same case, and a standalone script", func() {
		p, in := load("../../ledger/programs/ort-reducemax-nan.rx", "f", 3)
		a := script(p, executor.ONNXRuntime, "f", in, false)
		b := script(p, executor.ONNXRuntime, "f", in, false)
		Expect(a).To(Equal(b))
		s := string(a)
		Expect(s).To(HavePrefix("#!/usr/bin/env python3\n# Reproducer written by rxeq test: f from ort-reducemax-nan.rx, run by onnxruntime (ONNX Runtime 1.30.0, ORT_ENABLE_ALL)"))
		Expect(s).NotTo(MatchRegexp(`(?m)^\s*(import|from) (rxeq|onnxruntime|onnx)\b`))
		Expect(s).To(ContainSubstring("OPT_LEVEL = 99  # ORT_ENABLE_ALL"))
		noopt := string(script(p, executor.ONNXRuntimeNoOpt, "f", in, false))
		Expect(noopt).To(ContainSubstring("OPT_LEVEL = 0  # ORT_DISABLE_ALL"))
	})

	DescribeTable("exits 1 while ONNX Runtime's discrepancy reproduces, 0 when it does not",
		func(file, fn string, batch int, e executor.Name, signedZeros bool, code int, output string) {
			needLibrary()
			p, in, tols := loadWithTolerances(file, fn, batch)
			b, err := ortrepro.Repro(p, ortrepro.Options{
				Options:     repro.Options{Executor: e, Func: fn, Inputs: in, Version: "test"},
				Tolerances:  tols,
				SignedZeros: signedZeros,
			})
			Expect(err).NotTo(HaveOccurred())
			got, out := runScript(b)
			Expect(got).To(Equal(code), out)
			Expect(out).To(ContainSubstring("ONNX Runtime 1.30.0"))
			Expect(out).To(ContainSubstring(output))
		},
		Entry("ReduceMax drops a NaN that is not first (both levels)", "../../ledger/programs/ort-reducemax-nan.rx", "f", 3,
			executor.ONNXRuntime, false, 1, "want nan (0x7ff8000000000000) got "),
		Entry("ReduceMax drops a NaN that is not first, without optimizations", "../../ledger/programs/ort-reducemax-nan.rx", "f", 3,
			executor.ONNXRuntimeNoOpt, false, 1, "REPRODUCED"),
		Entry("Relu(-0) is -0", "../../ledger/programs/ort-relu-signed-zero.rx", "f", 3,
			executor.ONNXRuntime, true, 1, "want inf (0x7ff0000000000000) got -inf (0xff800000)"),
		Entry("Maximum(+0, -0) is -0", "../../ledger/programs/ort-maximum-signed-zero.rx", "f", 3,
			executor.ONNXRuntimeNoOpt, true, 1, "got -inf (0xff800000)"),
		Entry("Minimum(-0, +0) is +0", "../../ledger/programs/ort-minimum-signed-zero.rx", "f", 3,
			executor.ONNXRuntime, true, 1, "REPRODUCED"),
		Entry("DivMulFusion: the int64 remainder of 1 by 3 is 0 with the optimizations", "../../ledger/programs/ort-divmulfusion-rem.rx", "f", 1,
			executor.ONNXRuntime, false, 1, "[] want 1 (1) got 0 (0)"),
		Entry("DivMulFusion: and 1 without them", "../../ledger/programs/ort-divmulfusion-rem.rx", "f", 1,
			executor.ONNXRuntimeNoOpt, false, 0, "not reproduced"),
		Entry("Tanh up to 5 ULP, under the program's ulp=2", "../../ledger/programs/ort-tanh-accuracy.rx", "f", 257,
			executor.ONNXRuntime, false, 1, "[18, 6] want -0.9988381107367674 (0xbfeff67b57739c68) got -0.99883795 (0xbf7fb3d8), 3 ULP from want in float32 (allowed 2)"),
		Entry("a program ONNX Runtime gets right", "../../scenarios/reference.rx", "score_pipeline", 5,
			executor.ONNXRuntime, false, 0, "not reproduced"),
		Entry("a checked-arithmetic error, the same text as the reference's", "../../scenarios/error.rx", "score_divisor", 2,
			executor.ONNXRuntime, false, 0, "got error:      score_divisor: CheckedRem: division by zero (round_idx=0) at "),
	)

	It("reports a crash of ONNX Runtime, with its signal, as reproducing: the seed-72 session crash", func() {
		needLibrary()
		p, in := load("../../isolate/testdata/ort-crash.rx", "f0", 1)
		// Once is enough: the child's MALLOC_PERTURB_ makes the crash,
		// a read of uninitialised memory, come every time.
		b := script(p, executor.ONNXRuntime, "f0", in, false)
		for range 3 {
			code, out := runScript(b)
			Expect(code).To(Equal(1), out)
			Expect(out).To(ContainSubstring("the ONNX Runtime process died of SIGSEGV"))
			Expect(out).To(ContainSubstring("REPRODUCED: ONNX Runtime crashed (SIGSEGV)"))
		}

		// Without the optimizations the session is created, and f0 agrees.
		code, out := runScript(script(p, executor.ONNXRuntimeNoOpt, "f0", in, false))
		Expect(code).To(Equal(0), out)
	})

	It("reports a failing ONNX Runtime call with its code and message as reproducing: the nested If InlineIfSubgraph refuses", func() {
		needLibrary()
		// rxeq fuzz --seed 50 --executors oracle,onnxruntime, reduced
		// (onnx/ort's known_test.go).
		path := filepath.Join(GinkgoT().TempDir(), "nested-if.rx")
		Expect(os.WriteFile(path, []byte("//rx:batches 1\n//rx:input a0 normal(0, 0.5)\npackage p\n\n"+
			"func f(a0 [B][5][5]float32) (out0 [1][5][5]float32) {\n\tout0 = a0\n\tif !(3 == 0) {\n"+
			"\t\tif 9223372036854775806 != 2 {\n\t\t\tout0 = out0\n\t\t}\n\t\tout0 = Maximum(Mean(out0, 0), Sum(out0, 0, true))\n\t}\n\treturn\n}\n"), 0o644)).To(Succeed())
		p, in := load(path, "f", 1)
		code, out := runScript(script(p, executor.ONNXRuntime, "f", in, false))
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("ONNX Runtime 1.30.0 (OPT_LEVEL 99)"))
		Expect(out).To(MatchRegexp(`got error: +onnxruntime: CreateSessionFromArray: ORT_[A-Z_]+: .*InlineIfSubgraph`))
		Expect(out).To(ContainSubstring("REPRODUCED"))
		code, out = runScript(script(p, executor.ONNXRuntimeNoOpt, "f", in, false))
		Expect(code).To(Equal(0), out)
	})

	It("exits 2, naming RXEQ_ORT_LIB and ci/setup.sh, without the library", func() {
		needLibrary()
		p, in := load("../../ledger/programs/ort-reducemax-nan.rx", "f", 3)
		GinkgoT().Setenv("RXEQ_ORT_LIB", "/nonexistent/libonnxruntime.so.1")
		code, out := runScript(script(p, executor.ONNXRuntime, "f", in, false))
		Expect(code).To(Equal(2), out)
		Expect(out).To(ContainSubstring("RXEQ_ORT_LIB"))
		Expect(out).To(ContainSubstring("ci/setup.sh"))
	})
})

// The script's comparison, called on hand-built arrays: its compare(name,
// want, got) returns True on a mismatch.
var _ = Describe("repro.py's comparison", func() {
	const src = `//rx:batches 1
//rx:input x normal(0, 1)
package p

func f(x [B][2]float32) (y [B][2]float32) {
	y = x
	return
}
`
	// cases runs compare on each (want, got) pair of float64 and float32
	// literals under tolerance t and returns the results, "True" or
	// "False", one per line.
	cases := func(t compare.Tolerance, signed bool, pairs ...[2]string) []string {
		GinkgoHelper()
		if out, err := exec.Command(systemPython, "-c", "import numpy").CombinedOutput(); err != nil {
			Skip(systemPython + " cannot import numpy: " + string(out))
		}
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "p.rx")
		Expect(os.WriteFile(path, []byte(src), 0o644)).To(Succeed())
		p, in := load(path, "f", 1)
		b, err := ortrepro.Repro(p, ortrepro.Options{Options: repro.Options{Executor: executor.ONNXRuntime, Func: "f", Inputs: in},
			Tolerances: map[string]compare.Tolerance{"y": t}, SignedZeros: signed})
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "repro.py"), b, 0o644)).To(Succeed())
		code := "import sys, io, contextlib\nsys.path.insert(0, sys.argv[1])\nimport numpy as np\nimport repro\n"
		for _, pr := range pairs {
			code += fmt.Sprintf("with contextlib.redirect_stdout(io.StringIO()):\n    r = repro.compare('y', np.array([%s], dtype=np.float64), np.array([%s], dtype=np.float32))\nprint(r)\n", pr[0], pr[1])
		}
		out, err := exec.Command(systemPython, "-B", "-c", code, dir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		return strings.Fields(string(out))
	}
	nan, inf := "float('nan')", "float('inf')"

	It("takes NaN for NaN, an infinity by its sign, a finite value within atol + rtol*|want|", func() {
		Expect(cases(compare.Tolerance{RTol: 1e-4, ATol: 3e-6}, false,
			[2]string{nan, nan}, [2]string{nan, "1"}, [2]string{"1", nan},
			[2]string{inf, inf}, [2]string{inf, "-" + inf}, [2]string{inf, "3.4e38"},
			[2]string{"1e39", inf}, // beyond float32's range: the infinity it rounds to
			[2]string{"1", "1.0001"}, [2]string{"1", "1.00011"},
			[2]string{"0.0", "-0.0"},
		)).To(Equal([]string{"False", "True", "True", "False", "True", "True", "False", "False", "True", "False"}))
	})

	It("compares zero signs under signed-zero comparison", func() {
		Expect(cases(compare.Tolerance{RTol: 1e-4, ATol: 3e-6}, true,
			[2]string{"0.0", "-0.0"}, [2]string{"-0.0", "-0.0"}, [2]string{"-0.0", "0.0"},
		)).To(Equal([]string{"True", "False", "True"}))
	})

	It("holds a ULP bound against want rounded to float32, alone under NoAbsRel", func() {
		// 1 + 2^-23 is one float32 ULP above 1, 1 + 2^-22 two.
		Expect(cases(compare.Tolerance{ULP: 1, UseULP: true, NoAbsRel: true}, false,
			[2]string{"1", "1"}, [2]string{"1", "1 + 2**-23"}, [2]string{"1", "1 + 2**-22"}, [2]string{"1e-30", "0"},
		)).To(Equal([]string{"False", "False", "True", "True"}))
		Expect(cases(compare.Tolerance{RTol: 1e-4, ATol: 3e-6, ULP: 1, UseULP: true}, false,
			[2]string{"1", "1 + 2**-22"}, [2]string{"1", "1.001"},
		)).To(Equal([]string{"True", "True"}))
	})
})

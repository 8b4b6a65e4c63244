package ortrepro_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
			p, in := load(file, fn, batch)
			got, out := runScript(script(p, e, fn, in, signedZeros))
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

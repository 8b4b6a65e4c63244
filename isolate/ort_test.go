package isolate_test

import (
	"context"
	"errors"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// needORT skips a spec when ONNX Runtime's library is not installed, and
// fails it when RXEQ_REQUIRE_ORT is set.
func needORT() string {
	GinkgoHelper()
	lib := os.Getenv(builtin.EnvORTLib)
	if _, err := ort.Find(lib); err != nil {
		if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
			Fail("ONNX Runtime is required here (RXEQ_REQUIRE_ORT is set) but: " + err.Error())
		}
		Skip("ONNX Runtime is not installed: " + err.Error())
	}
	return lib
}

// ortExecutor is an isolated ONNX Runtime executor at level l whose
// worker is this test binary.
func ortExecutor(lib string, l ort.Level) isolate.Executor {
	return isolate.Executor{ONNXRuntime: &ort.Executor{Library: lib, Level: l}, Command: []string{self}, Env: []string{workerEnv}}
}

var _ = Describe("the isolated ONNX Runtime executors", func() {
	It("are named as in process, need no compiler, and run a program in the worker", func() {
		lib := needORT()
		e := ortExecutor(lib, ort.NoOptimize)
		Expect(e.Name()).To(Equal(executor.ONNXRuntimeNoOpt))
		Expect(ortExecutor(lib, ort.Optimize).Name()).To(Equal(executor.ONNXRuntime))
		Expect(executor.NeedsCompiler(e)).To(BeFalse())
		_, p := load("testdata/two.rx")
		prep, err := e.Prepare(context.Background(), nil, p)
		Expect(err).NotTo(HaveOccurred())
		defer prep.Close()
		Expect(prep.(executor.Built).Info().Framework).To(Equal("ONNX Runtime 1.30.0, graph optimization none (ORT_DISABLE_ALL)"))
		x, w := tensor.NewFloat32(2, 8), tensor.NewFloat32(8, 4)
		for i := range x.F32 {
			x.F32[i] = float32(i) - 3
		}
		out, err := prep.Run(context.Background(), "plain", map[string]*tensor.Tensor{"x": x, "w": w})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Path).To(Equal(executor.ONNXRuntimeNoOpt))
		Expect(out.Outputs).NotTo(BeEmpty())
		// A wrong input is the shared boundary error, across the pipe.
		_, err = prep.Run(context.Background(), "plain", map[string]*tensor.Tensor{})
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("plain"))
	})

	// testdata/ort-crash.rx's f0 is `rxeq fuzz --seed 72`'s crash of ONNX
	// Runtime 1.30.0 (onnx/ort/testdata/crash-seed-72.rx), as rxeq fuzz
	// reduced it: with the graph optimizations on, creating its session
	// dies of SIGSEGV, not every time (in 19 of 20 attempts from the
	// rxeq binary; far fewer from this test binary, whose heap differs).
	// In the worker the session is created at the function's first call,
	// so the crash fails that call and the next one runs in a new worker.
	It("turn a crash of ONNX Runtime into the failure of that function's cases, and the run goes on", func() {
		lib := needORT()
		f, _ := load("testdata/ort-crash.rx")
		run := func(l ort.Level) (crashes int) {
			e := ortExecutor(lib, l)
			res, err := harness.Run(context.Background(), []*program.File{f}, harness.Options{Executors: []executor.Executor{e}, SkipLocks: true})
			Expect(err).NotTo(HaveOccurred())
			seen := 0
			for _, c := range res.Cases {
				if c.Executor != e.Name() {
					continue
				}
				seen++
				if c.Function == "f1" || l == ort.NoOptimize || c.Status == harness.StatusPass {
					Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
					continue
				}
				Expect(c.Message).To(ContainSubstring(`"onnxruntime crashed: signal SIGSEGV"`), c.Name())
				crashes++
			}
			Expect(seen).To(Equal(6))
			return crashes
		}
		Expect(run(ort.NoOptimize)).To(Equal(0))
		crashes := 0
		for range 20 {
			if crashes = run(ort.Optimize); crashes > 0 {
				break
			}
		}
		Expect(crashes).To(BeNumerically(">=", 1), "ONNX Runtime did not crash in 60 attempts")
	})

	It("keep the kinds of the worker's errors", func() {
		lib := needORT()
		_, p := load("testdata/ort-crash.rx")
		prep, err := ortExecutor(lib, ort.NoOptimize).Prepare(context.Background(), nil, p)
		Expect(err).NotTo(HaveOccurred())
		defer prep.Close()
		a := tensor.NewFloat32(2, 1, 1)
		_, err = prep.Run(context.Background(), "f1", map[string]*tensor.Tensor{"a0": a, "n0b": tensor.FromInt64([]int64{-1})})
		Expect(err).NotTo(HaveOccurred())
		_, err = prep.Run(context.Background(), "nosuch", map[string]*tensor.Tensor{"a0": a})
		Expect(errors.Is(err, executor.ErrExecutor)).To(BeTrue(), "%v", err)
	})
})

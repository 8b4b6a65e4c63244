package builtin_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/oracle"
)

func TestBuiltin(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "executor/builtin")
}

func names(execs []executor.Executor) []executor.Name {
	var out []executor.Name
	for _, e := range execs {
		out = append(out, e.Name())
	}
	return out
}

var _ = Describe("Select", func() {
	It("gives the oracle as the reference and fallback, native and torch by default, naming each one that cannot run and why", func() {
		sel, err := builtin.Select(nil, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Reference).To(Equal(oracle.Executor{}))
		want := []executor.Name{executor.Fallback}
		var un []executor.Name
		for _, n := range []executor.Name{executor.Native, executor.Torch} {
			if err := builtin.Available(n); err != nil {
				un = append(un, n)
				continue
			}
			want = append(want, n)
		}
		Expect(names(sel.Executors)).To(Equal(want))
		Expect(sel.Unavailable).To(HaveLen(len(un)))
		for i, u := range sel.Unavailable {
			Expect(u.Executor).To(Equal(un[i]))
			Expect(u.Reason).To(Equal(builtin.Available(un[i]).Error()))
		}
		if err := native.Available(); err == nil && builtin.Available(executor.Torch) != nil {
			Expect(sel.Unavailable[0].Reason).To(ContainSubstring("libtorch-dev"))
		}
	})

	It("builds exactly the executors named, in order, the oracle being the reference only", func() {
		sel, err := builtin.Select([]executor.Name{"oracle", "fallback"}, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(Equal([]executor.Executor{fallback.Executor{}}))
		Expect(sel.Unavailable).To(BeEmpty())
	})

	It("carries one Config into native and torch, in process or in workers", func() {
		if err := native.Available(); err != nil {
			Skip(err.Error())
		}
		cfg := builtin.Config{Mode: native.Auto, CompileTimeout: time.Minute, TorchThreads: 3, CC: "gcc", CXX: "g++",
			ProgramCC: "tcc", CacheDir: "/c", RuntimeCacheDir: "/rt", CallTimeout: 7 * time.Second}
		sel, err := builtin.Select([]executor.Name{"native"}, cfg, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(Equal([]executor.Executor{native.Executor{Options: native.Options{Mode: native.Auto,
			CompileTimeout: time.Minute, CC: "gcc", CXX: "g++", ProgramCC: "tcc", CacheDir: "/c", RuntimeCacheDir: "/rt"}}}))

		cfg.Isolate = true
		cfg.Worker = []string{"/bin/rxeq", "worker"}
		sel, err = builtin.Select([]executor.Name{"native"}, cfg, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(HaveLen(1))
		ie, ok := sel.Executors[0].(isolate.Executor)
		Expect(ok).To(BeTrue())
		Expect(ie.Timeout).To(Equal(7 * time.Second))
		Expect(ie.Command).To(Equal(cfg.Worker))
		Expect(ie.Options.ProgramCC).To(Equal("tcc"))
		Expect(ie.Options.RuntimeCacheDir).To(Equal("/rt"))
		Expect(ie.Options.TorchThreads).To(BeZero(), "threads are torch's")
		Expect(executor.NeedsCompiler(ie)).To(BeTrue())

		if builtin.Available(executor.Torch) == nil {
			sel, err = builtin.Select([]executor.Name{"torch"}, cfg, nil)
			Expect(err).NotTo(HaveOccurred())
			te := sel.Executors[0].(isolate.Executor)
			Expect(te.Name()).To(Equal(executor.Torch))
			Expect(te.Options.TorchThreads).To(Equal(3))
		}
	})

	It("builds the external executors named, each with the call timeout unless it has its own", func() {
		ext := []external.Options{{Name: "mine", Command: []string{"/bin/true"}}, {Name: "other", Command: []string{"/bin/true"}, Timeout: time.Second}}
		sel, err := builtin.Select([]executor.Name{"fallback", "mine"}, builtin.Config{CallTimeout: 9 * time.Second}, ext)
		Expect(err).NotTo(HaveOccurred())
		defer sel.Close()
		Expect(names(sel.Executors)).To(Equal([]executor.Name{"fallback", "mine"}))

		all, err := builtin.Select(nil, builtin.Config{}, ext)
		Expect(err).NotTo(HaveOccurred())
		defer all.Close()
		Expect(names(all.Executors)[len(all.Executors)-2:]).To(Equal([]executor.Name{"mine", "other"}))
	})

	It("refuses an unknown name, a name given twice, and an external executor with a built-in name", func() {
		_, err := builtin.Select([]executor.Name{"fallback", "tensorflow"}, builtin.Config{}, nil)
		Expect(errors.Is(err, builtin.ErrUnknown)).To(BeTrue())
		Expect(err).To(MatchError(`unknown executor "tensorflow" (want oracle, fallback, native, torch, onnxruntime, onnxruntime-noopt, pytorch, torchscript, numpy, tfjs-cpu, tfjs-wasm, native-avx2, native-sse2, native-c, native-tiled, or a name defined with --executor)`))
		_, err = builtin.Select([]executor.Name{"fallback", "fallback"}, builtin.Config{}, nil)
		Expect(err).To(MatchError(`executor "fallback" listed twice`))
		_, err = builtin.Select(nil, builtin.Config{}, []external.Options{{Name: "native", Command: []string{"x"}}})
		Expect(err).To(MatchError(ContainSubstring(`"native" is taken by a built-in executor`)))
	})
})

var _ = Describe("Config.FromEnv", func() {
	It("fills only what the Config leaves empty, from the documented variables", func() {
		env := map[string]string{"CC": "clang", "CXX": "clang++", "RXEQ_CACHE": "/cache", "RXEQ_RUNTIME_CACHE": "/rt", "RXEQ_PROGRAM_CC": "tcc",
			"RXEQ_ORT_LIB": "/ort/libonnxruntime.so.1", "RXEQ_PYTHON": "/opt/py/bin/python3"}
		got := builtin.Config{CC: "gcc"}.FromEnv(func(k string) string { return env[k] })
		Expect(got).To(Equal(builtin.Config{CC: "gcc", CXX: "clang++", CacheDir: "/cache", RuntimeCacheDir: "/rt", ProgramCC: "tcc",
			ORTLib: "/ort/libonnxruntime.so.1", Python: "/opt/py/bin/python3"}))
	})
})

var _ = Describe("the registry", func() {
	It("knows the built-in executors by their typed names", func() {
		Expect(builtin.Names()).To(Equal([]executor.Name{executor.Oracle, executor.Fallback, executor.Native, executor.Torch,
			executor.ONNXRuntime, executor.ONNXRuntimeNoOpt, executor.PyTorch, executor.TorchScript, executor.NumPy, executor.TFJSCPU, executor.TFJSWasm,
			executor.NativeAVX2, executor.NativeSSE2, executor.NativeC, executor.NativeTiled}))
		Expect(builtin.DefaultNames()).NotTo(ContainElement(executor.TFJSCPU), "TensorFlow.js is named, not a default")
		Expect(builtin.DefaultNames()).NotTo(ContainElement(executor.ONNXRuntime), "ONNX Runtime is named, not a default")
		Expect(builtin.IsBuiltin("numpy")).To(BeTrue())
		Expect(builtin.IsBuiltin("author-numpy")).To(BeFalse())
		Expect(builtin.Available(executor.Fallback)).To(Succeed())
		Expect(builtin.Available("author-numpy")).To(MatchError(builtin.ErrUnknown))
	})
})

var _ = Describe("the native variants", func() {
	BeforeEach(func() {
		if err := native.Available(); err != nil {
			Skip(err.Error())
		}
	})

	It("are native with every call's kernels at an ISA or a tile of 64 rows, each the twin of native, in process or in workers", func() {
		want := map[executor.Name]native.Options{
			executor.NativeAVX2:  {CacheDir: "/c", CallISA: "avx2"},
			executor.NativeSSE2:  {CacheDir: "/c", CallISA: "sse2"},
			executor.NativeC:     {CacheDir: "/c", CallISA: "c"},
			executor.NativeTiled: {CacheDir: "/c", TileRows: builtin.TiledRows},
		}
		for name, opts := range want {
			if (builtin.Config{}).Available(name) != nil {
				continue
			}
			sel, err := builtin.Select([]executor.Name{name}, builtin.Config{CacheDir: "/c"}, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(sel.Executors).To(Equal([]executor.Executor{native.Executor{Options: opts, Variant: name}}))
			Expect(sel.Executors[0].Name()).To(Equal(name))
			Expect(executor.TwinOf(sel.Executors[0])).To(Equal(executor.Native))

			sel, err = builtin.Select([]executor.Name{name}, builtin.Config{CacheDir: "/c", Isolate: true}, nil)
			Expect(err).NotTo(HaveOccurred())
			ie := sel.Executors[0].(isolate.Executor)
			Expect(ie.Options).To(Equal(opts))
			Expect(ie.Name()).To(Equal(name))
			Expect(executor.TwinOf(ie)).To(Equal(executor.Native))
		}
		sel, err := builtin.Select([]executor.Name{executor.Native}, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(executor.TwinOf(sel.Executors[0])).To(BeEmpty(), "native has no twin")
	})

	It("are unavailable above the cap of $RXEQ_NATIVE_ISA, saying so", func() {
		cfg := builtin.Config{ISA: "sse2"}
		Expect(cfg.Available(executor.NativeSSE2)).To(Succeed())
		Expect(cfg.Available(executor.NativeC)).To(Succeed())
		err := cfg.Available(executor.NativeAVX2)
		Expect(errors.Is(err, builtin.ErrISA)).To(BeTrue())
		Expect(err).To(MatchError("instruction set not available: $RXEQ_NATIVE_ISA caps the native kernels at sse2, below avx2"))
		sel, err := builtin.Select([]executor.Name{executor.NativeAVX2}, cfg, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(BeEmpty())
		Expect(sel.Unavailable).To(Equal([]executor.Unavailable{{Executor: executor.NativeAVX2,
			Reason: "instruction set not available: $RXEQ_NATIVE_ISA caps the native kernels at sse2, below avx2"}}))
	})

	It("are unavailable above what the CPU runs, saying so, and available up to it", func() {
		widest, err := runtime.DetectISA("")
		Expect(err).NotTo(HaveOccurred())
		for _, c := range []struct {
			name executor.Name
			isa  string
		}{{executor.NativeC, "c"}, {executor.NativeSSE2, "sse2"}, {executor.NativeAVX2, "avx2"}} {
			err := builtin.Available(c.name)
			if slices.Index(runtime.ISAs, c.isa) <= slices.Index(runtime.ISAs, widest) {
				Expect(err).NotTo(HaveOccurred(), string(c.name))
				continue
			}
			Expect(err).To(MatchError("instruction set not available: this CPU runs the native kernels at " + widest + " at most, not " + c.isa))
		}
	})
})

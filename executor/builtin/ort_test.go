//go:build cgo

package builtin_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
)

var _ = Describe("the ONNX Runtime executors", func() {
	It("are unavailable without the library, with the reason and how to install it", func() {
		missing := filepath.Join(GinkgoT().TempDir(), "libonnxruntime.so.1")
		cfg := builtin.Config{ORTLib: missing}
		for _, name := range []executor.Name{executor.ONNXRuntime, executor.ONNXRuntimeNoOpt} {
			err := cfg.Available(name)
			Expect(err).To(MatchError(ContainSubstring("no ONNX Runtime library at " + missing)))
			Expect(err).To(MatchError(ContainSubstring("npm pack onnxruntime-node@1.30.0")))
		}
		sel, err := builtin.Select([]executor.Name{"fallback", "onnxruntime", "onnxruntime-noopt"}, cfg, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(names(sel.Executors)).To(Equal([]executor.Name{"fallback"}))
		Expect(sel.Unavailable).To(HaveLen(2))
		Expect(sel.Unavailable[0].Executor).To(Equal(executor.ONNXRuntime))
		Expect(sel.Unavailable[1].Reason).To(ContainSubstring("RXEQ_ORT_LIB"))
	})

	It("are built with the library and the level of the Config", func() {
		lib := os.Getenv("RXEQ_ORT_LIB")
		if builtin.Available(executor.ONNXRuntime) != nil && lib == "" {
			Skip("ONNX Runtime is not installed")
		}
		sel, err := builtin.Select([]executor.Name{"onnxruntime", "onnxruntime-noopt"}, builtin.Config{}.FromEnv(os.Getenv), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Unavailable).To(BeEmpty())
		Expect(names(sel.Executors)).To(Equal([]executor.Name{"onnxruntime", "onnxruntime-noopt"}))
	})
})

package ort_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

func TestORT(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ONNX Runtime Suite")
}

// libPath is the library the specs use: $RXEQ_ORT_LIB, else where
// ci/setup.sh puts it.
func libPath() string { return os.Getenv("RXEQ_ORT_LIB") }

// needLibrary skips the spec when ONNX Runtime is not installed, and fails
// it when RXEQ_REQUIRE_ORT is set (ci/test.sh sets it after ci/setup.sh
// installed the library).
func needLibrary() *ort.Library {
	GinkgoHelper()
	lib, err := ort.Find(libPath())
	if err != nil {
		if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
			Fail("ONNX Runtime is required here (RXEQ_REQUIRE_ORT is set) but: " + err.Error())
		}
		Skip("ONNX Runtime is not installed: " + err.Error())
	}
	return lib
}

// compile parses and lowers an .rx source.
func compile(src string) (*program.File, *ir.Program) {
	GinkgoHelper()
	f, err := program.Parse("t.rx", []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

// run prepares src with executor e, runs fn once and closes it.
func run(e ort.Executor, src, fn string, inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	GinkgoHelper()
	f, p := compile(src)
	pr, err := e.Prepare(context.Background(), f, p)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(pr.Close()).To(Succeed()) }()
	out, err := pr.Run(context.Background(), fn, inputs)
	return out.Outputs, err
}

// both are the two executors, on the library the specs use.
func both() []ort.Executor {
	return []ort.Executor{{Library: libPath(), Level: ort.Optimize}, {Library: libPath(), Level: ort.NoOptimize}}
}

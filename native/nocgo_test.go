//go:build !cgo

package native_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// These specs run in a build without cgo (CGO_ENABLED=0 go test), where
// the specs that compile and call C are not built.
var _ = Describe("a build without cgo", func() {
	const reason = "rxeq was built without cgo (CGO_ENABLED=0): rebuild with CGO_ENABLED=1 and a C compiler to run native and torch code"

	It("reports native code unavailable, saying how to rebuild", func() {
		err := native.Available()
		Expect(err).To(MatchError(native.ErrUnavailable))
		Expect(err.Error()).To(Equal(reason))
	})

	It("fails Compile in forced mode before looking for a compiler, for both runtimes", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		for _, rt := range []executor.Name{executor.Native, executor.Torch} {
			// A compiler that does not exist: were it looked for, the error
			// would be ErrCompiler.
			opts := native.Options{CC: "/nonexistent/cc", CXX: "/nonexistent/c++", CacheDir: suiteCache, Runtime: rt}
			prog, err := native.Compile(context.Background(), p, opts)
			Expect(prog).To(BeNil())
			Expect(errors.Is(err, native.ErrUnavailable)).To(BeTrue(), "runtime %q: %v", rt, err)
			Expect(errors.Is(err, native.ErrCompiler)).To(BeFalse())
			Expect(err.Error()).To(Equal(reason))
		}
	})

	It("fails CompileBatch before looking for a compiler", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		opts := native.Options{CC: "/nonexistent/cc", CacheDir: suiteCache}
		progs, _, err := native.CompileBatch(context.Background(), []*ir.Program{p, p}, opts)
		Expect(progs).To(BeNil())
		Expect(errors.Is(err, native.ErrUnavailable)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, native.ErrCompiler)).To(BeFalse())
	})

	It("runs every function on the fallback in auto mode and says why", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		prog, err := native.Compile(context.Background(), p, native.Options{Mode: native.Auto, CC: "/nonexistent/cc", CacheDir: suiteCache})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(prog.Close)
		Expect(prog.NativeError()).To(MatchError(native.ErrUnavailable))
		path, why := prog.PathOf("two")
		Expect(path).To(Equal(executor.Fallback))
		Expect(why).To(MatchError(native.ErrUnavailable))
		Expect(prog.Info().Library).To(BeEmpty())

		res, err := prog.Run(context.Background(), "two", boundaryInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Path).To(Equal(executor.Fallback))
		want, err := fallbackRun(p, "two", boundaryInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Outputs).To(Equal(want))
		Expect(prog.Counters()).To(Equal(native.Counters{FallbackRuns: 1}))

		outs := map[string]*tensor.Tensor{}
		for name, t := range want {
			if t.DType == tensor.Int64 {
				outs[name] = tensor.NewInt64(t.Shape...)
			} else {
				outs[name] = tensor.NewFloat32(t.Shape...)
			}
		}
		ran, err := prog.RunInto(context.Background(), "two", boundaryInputs(), outs)
		Expect(err).NotTo(HaveOccurred())
		Expect(ran).To(Equal(executor.Fallback))
		Expect(outs).To(Equal(want))
	})

	It("still generates C: code generation needs no cgo", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		src, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(src)).To(ContainSubstring("int " + native.CFuncName("two") + "("))
	})
})

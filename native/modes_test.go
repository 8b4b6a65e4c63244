//go:build cgo

package native_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// mixedProgram holds one function the native backend compiles and one it
// does not (a rank-5 value) but the fallback runs.
func mixedProgram() *ir.Program {
	ok := irtest.NewFunc("twice")
	x := ok.Param("x", ir.Float32, 2)
	two := ok.Temp(ir.Float32)
	ok.Op(ir.ConstF, two).F = 2
	r := ok.Result("r", ir.Float32, 2)
	ok.Op(ir.Mul, r, x, two)

	big := irtest.NewFunc("big")
	y := big.Param("y", ir.Float32, 1, 1, 1, 1, 2)
	s := big.Result("s", ir.Float32, 1, 1, 1, 1, 2)
	big.Op(ir.Copy, s, y)
	return &ir.Program{File: "mixed.rx", Funcs: []*ir.Func{ok.Fn, big.Fn}}
}

var _ = Describe("modes", Label("native"), func() {
	ctx := context.Background()
	xin := func() map[string]*tensor.Tensor { return map[string]*tensor.Tensor{"x": f32(sh(2), 1.5, -2)} }
	yin := func() map[string]*tensor.Tensor {
		return map[string]*tensor.Tensor{"y": tensor.FromFloat32([]float32{3, 4}, 1, 1, 1, 1, 2)}
	}

	It("forced: an unsupported function is a compile error naming it, never a fallback run", func() {
		_, err := native.Compile(ctx, mixedProgram(), native.Options{CacheDir: suiteCache})
		Expect(err).To(MatchError(native.ErrUnsupported))
		Expect(err.Error()).To(ContainSubstring("function big: parameter y has rank 5"))
	})

	It("auto: native where supported, the fallback elsewhere, and the result says which", func() {
		prog, err := native.Compile(ctx, mixedProgram(), native.Options{CacheDir: suiteCache, Mode: native.Auto})
		Expect(err).NotTo(HaveOccurred())
		defer prog.Close()
		r, err := prog.Run(ctx, "twice", xin())
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Path).To(Equal(executor.Native))
		Expect(r.Outputs["r"].F32).To(Equal([]float32{3, -4}))
		r, err = prog.Run(ctx, "big", yin())
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Path).To(Equal(executor.Fallback))
		Expect(r.Outputs["s"].F32).To(Equal([]float32{3, 4}))
		path, why := prog.PathOf("big")
		Expect(path).To(Equal(executor.Fallback))
		Expect(why).To(MatchError(native.ErrUnsupported))
		Expect(prog.Counters().FallbackRuns).To(Equal(int64(1)))
		Expect(prog.Counters().Calls).To(Equal(int64(1)))
	})

	It("auto without a C compiler on PATH runs everything on the fallback", func() {
		GinkgoT().Setenv("PATH", GinkgoT().TempDir())
		GinkgoT().Setenv("CC", "")
		prog, err := native.Compile(ctx, mixedProgram(), native.Options{CacheDir: suiteCache, Mode: native.Auto})
		Expect(err).NotTo(HaveOccurred())
		defer prog.Close()
		Expect(prog.NativeError()).To(MatchError(native.ErrCompiler))
		r, err := prog.Run(ctx, "twice", xin())
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Path).To(Equal(executor.Fallback))
		Expect(r.Outputs["r"].F32).To(Equal([]float32{3, -4}))
		Expect(prog.Counters().Calls).To(BeZero())
	})

	It("forced without a C compiler fails and says so", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		_, err := native.Compile(ctx, p, native.Options{CacheDir: suiteCache, CC: "/no/such/cc"})
		Expect(err).To(MatchError(native.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring(`CC="/no/such/cc"`))
	})

	It("parses mode names", func() {
		m, err := native.ParseMode("auto")
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(native.Auto))
		Expect(native.Forced.String()).To(Equal("forced"))
		_, err = native.ParseMode("sometimes")
		Expect(err).To(HaveOccurred())
	})
})

//go:build cgo

package native_test

import (
	"context"
	"errors"
	"math"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	nrt "github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/tensor"
)

// callISASrc uses every kernel family that differs by ISA: the SLEEF
// maps, MatMul with a bias, the binary row kernels and Softmax.
const callISASrc = `package p

func f(x [B][12]float32, w [12][9]float32, b [9]float32) (y [B][9]float32, p [B][9]float32) {
	y = Tanh(MatMul(x, w) + b) - Exp(MatMul(x, w) * 0.25) + Sigmoid(MatMul(x, w))
	p = Softmax(Log(Abs(y) + 1.5) / b, 1)
	return
}
`

// callISAInputs are dense inputs of callISASrc's f at batch 37.
func callISAInputs() map[string]*tensor.Tensor {
	x, w, b := make([]float32, 37*12), make([]float32, 12*9), make([]float32, 9)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.731)) * 3
	}
	for i := range w {
		w[i] = float32(math.Cos(float64(i)*1.37)) * 0.4
	}
	for i := range b {
		b[i] = 0.25 + float32(i)*0.1
	}
	return map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, 37, 12), "w": tensor.FromFloat32(w, 12, 9), "b": tensor.FromFloat32(b, 9)}
}

// The instruction set of the kernels is chosen per call, so that one
// loaded library serves native and its variants native-avx2, native-sse2
// and native-c, each call saying which kernels ran.
var _ = Describe("kernels at the instruction set a call asks for", Label("native"), func() {
	It("runs each call at its ISA from one library, with the bits of a library capped there", func() {
		_, p := parse("isa.rx", callISASrc)
		prog := compile(p)
		best, err := nrt.DetectISA("")
		Expect(err).NotTo(HaveOccurred())
		in := callISAInputs()
		def, err := prog.Run(context.Background(), "f", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(def.ISA).To(Equal(best), "a call that asks for nothing runs at the library's widest")
		forEachISA(func(isa string) {
			got, err := prog.RunWith(context.Background(), "f", in, native.CallOptions{ISA: isa})
			Expect(err).NotTo(HaveOccurred())
			Expect(got.ISA).To(Equal(isa), "the runtime says which kernels ran")
			capped, err := compileISA(p, isa).Run(context.Background(), "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(capped.ISA).To(Equal(isa))
			for _, name := range []string{"y", "p"} {
				Expect(bitsOf(got.Outputs[name])).To(Equal(bitsOf(capped.Outputs[name])), "%s: %s", isa, name)
				Expect(bitsOf(got.Outputs[name])).To(Equal(bitsOf(def.Outputs[name])), "%s: %s", isa, name)
			}
		})
	})

	It("runs every call at Options.CallISA, and a call may still ask for another", func() {
		_, p := parse("isa.rx", callISASrc)
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, CallISA: "c"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(prog.Close)
		r, err := prog.Run(context.Background(), "f", callISAInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(r.ISA).To(Equal("c"))
		r, err = prog.RunWith(context.Background(), "f", callISAInputs(), native.CallOptions{ISA: "sse2"})
		if best, _ := nrt.DetectISA(""); best == "c" {
			Expect(errors.Is(err, native.ErrISA)).To(BeTrue())
			return
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(r.ISA).To(Equal("sse2"))
	})

	It("refuses an ISA the library cannot run, or that is none", func() {
		_, p := parse("isa.rx", callISASrc)
		_, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, CallISA: "avx1"})
		Expect(errors.Is(err, native.ErrISA)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring(`"avx1" is not one of c, sse2, avx2, avx512`)))
		best, err := nrt.DetectISA("")
		Expect(err).NotTo(HaveOccurred())
		if best == "c" {
			Skip("this CPU runs the kernels in plain C only")
		}
		prog := compileISA(p, "c")
		_, err = prog.RunWith(context.Background(), "f", callISAInputs(), native.CallOptions{ISA: best})
		Expect(errors.Is(err, native.ErrISA)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("the runtime library runs its kernels at c at most, not " + best)))
	})
})

// bitsOf returns a float32 tensor's elements as bits.
func bitsOf(t *tensor.Tensor) []uint32 {
	out := make([]uint32, len(t.F32))
	for i, v := range t.F32 {
		out[i] = math.Float32bits(v)
	}
	return slices.Clip(out)
}

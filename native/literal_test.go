//go:build cgo

package native_test

import (
	"context"
	"math"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("a float literal beyond float32's range", Label("native"), func() {
	It("compiles to ±Inf, with CC and with tcc, and gives the fallback's bits", func() {
		_, p := parse("inf.rx", `package p

func f(x [B][3]float32) (a [B][3]float32, b [B][3]float32, c [B][3]float32) {
	a = x * 1e39
	b = Maximum(x, -1e39) + 1e-50
	c = Minimum(x*2, 3.5e38) - 1e300
	return
}
`)
		src, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(src)).To(ContainSubstring("RX_INF"))
		in := map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{1, -2, 0.5, 3e38, -1e-3, 7}, 2, 3)}
		want, err := fallbackRun(p, "f", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(want["a"].F32[:2]).To(Equal([]float32{float32(math.Inf(1)), float32(math.Inf(-1))}))
		check := func(got map[string]*tensor.Tensor) {
			GinkgoHelper()
			for _, name := range []string{"a", "b", "c"} {
				for i, g := range got[name].F32 {
					Expect(math.Float32bits(g)).To(Equal(math.Float32bits(want[name].F32[i])), "%s[%d]", name, i)
				}
			}
		}
		check(run(compile(p), "f", in))
		if _, err := exec.LookPath("tcc"); err != nil {
			Skip("tcc is not installed")
		}
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, ProgramCC: "tcc"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(prog.Close)
		check(run(prog, "f", in))
	})
})

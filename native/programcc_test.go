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

var _ = Describe("a program compiled by tcc (Options.ProgramCC)", Label("native"), func() {
	It("links against the runtime built by CC and gives the same bits", func() {
		if _, err := exec.LookPath("tcc"); err != nil {
			Skip("tcc is not installed")
		}
		_, p := parse("t.rx", `package p

func score(x [B][4]float32, w [4][3]float32, rounds int64) (logits [B][3]float32, probs [B][3]float32, cls [B]int64) {
	logits = MatMul(x, w)
	for i := range rounds {
		if CheckedRem(i, 2) == 0 {
			logits = Tanh(logits) * 1.5
		} else {
			logits = Exp(logits) - 1
		}
	}
	probs = Softmax(logits, 1)
	cls = Argmax(probs, 1)
	return
}
`)
		in := map[string]*tensor.Tensor{
			"x":      tensor.FromFloat32([]float32{1, -2, 0.5, 3, 0, 0, 1e-3, -7}, 2, 4),
			"w":      tensor.FromFloat32([]float32{0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1, 1.1, -1.2}, 4, 3),
			"rounds": tensor.Scalar(5),
		}
		ref := run(compile(p), "score", in)
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, ProgramCC: "tcc"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(prog.Close)
		Expect(prog.Info().Compiler).To(ContainSubstring("program: tcc version"))
		got := run(prog, "score", in)
		for _, name := range []string{"logits", "probs"} {
			for i, g := range got[name].F32 {
				Expect(math.Float32bits(g)).To(Equal(math.Float32bits(ref[name].F32[i])), "%s[%d]", name, i)
			}
		}
		Expect(got["cls"].I64).To(Equal(ref["cls"].I64))
		_, err = prog.Run(context.Background(), "score", map[string]*tensor.Tensor{"x": in["x"], "w": in["w"], "rounds": tensor.Scalar(-1)})
		Expect(err).NotTo(HaveOccurred())
	})
})

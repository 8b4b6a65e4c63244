//go:build cgo

package native_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// batchPrograms are two programs whose functions have the same names (a
// fuzzer's programs all call theirs f0, f1, …) and different bodies.
var batchPrograms = []string{`package p

func score(x [B][4]float32, w [4][3]float32) (logits [B][3]float32, cls [B]int64) {
	logits = Tanh(MatMul(x, w)) * 1.5
	cls = Argmax(logits, 1)
	return
}

func other(x [B][4]float32) (y [B][4]float32) {
	y = Exp(x) - 1
	return
}
`, `package p

func score(x [B][4]float32, w [4][3]float32) (logits [B][3]float32, cls [B]int64) {
	logits = Softmax(MatMul(x, w)+0.25, 1)
	cls = Argmax(logits, 1)
	return
}
`}

// tooLarge is a program whose function the native backend refuses
// (more IR instructions than it compiles).
func tooLarge() string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc big(x [B][4]float32) (y [B][4]float32) {\n\ty = x\n")
	for range 1100 {
		b.WriteString("\ty = Tanh(y) + 0.5\n")
	}
	b.WriteString("\treturn\n}\n")
	return b.String()
}

var _ = Describe("CompileBatch", Label("native"), func() {
	opts := func() native.Options {
		o := native.Options{CacheDir: suiteCache}
		if _, err := exec.LookPath("tcc"); err == nil {
			o.ProgramCC = "tcc"
		}
		return o
	}
	in := map[string]*tensor.Tensor{
		"x": tensor.FromFloat32([]float32{1, -2, 0.5, 3, 0, 0, 1e-3, -7}, 2, 4),
		"w": tensor.FromFloat32([]float32{0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1, 1.1, -1.2}, 4, 3),
	}
	sameBits := func(got, want map[string]*tensor.Tensor) {
		GinkgoHelper()
		Expect(got).To(HaveLen(len(want)))
		for name, w := range want {
			g := got[name]
			Expect(g.Shape).To(Equal(w.Shape), name)
			Expect(g.I64).To(Equal(w.I64), name)
			for i := range w.F32 {
				Expect(math.Float32bits(g.F32[i])).To(Equal(math.Float32bits(w.F32[i])), "%s[%d]", name, i)
			}
		}
	}

	It("builds programs with functions of the same names into one library, each computing what it computes alone", func() {
		var ps []*ir.Program
		for i, src := range batchPrograms {
			_, p := parse(fmt.Sprintf("b%d.rx", i), src)
			ps = append(ps, p)
		}
		progs, errs, err := native.CompileBatch(context.Background(), ps, opts())
		Expect(err).NotTo(HaveOccurred())
		Expect(errs).To(Equal([]error{nil, nil}))
		Expect(progs).To(HaveLen(2))
		for _, p := range progs {
			DeferCleanup(p.Close)
		}
		Expect(progs[0].Info().Library).To(Equal(progs[1].Info().Library), "one library")
		for i, p := range ps {
			alone, err := native.Compile(context.Background(), p, opts())
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(alone.Close)
			Expect(alone.Info().Library).NotTo(Equal(progs[i].Info().Library))
			Expect(progs[i].Source()).To(Equal(alone.Source()), "the C of a member is the C Compile builds")
			for _, fn := range p.Funcs {
				in := map[string]*tensor.Tensor{"x": in["x"], "w": in["w"]}
				if fn.Name == "other" {
					delete(in, "w")
				}
				sameBits(run(progs[i], fn.Name, in), run(alone, fn.Name, in))
			}
		}
		By("closing one member, the other still runs")
		Expect(progs[0].Close()).To(Succeed())
		out := run(progs[1], "score", in)
		Expect(out["cls"].I64).To(HaveLen(2))
		_, err = progs[0].Run(context.Background(), "score", in)
		Expect(errors.Is(err, native.ErrClosed)).To(BeTrue(), "%v", err)
	})

	It("leaves out a program Compile refuses, with Compile's error, and builds the others", func() {
		_, good := parse("good.rx", batchPrograms[1])
		_, big := parse("big.rx", tooLarge())
		_, wantErr := native.Compile(context.Background(), big, opts())
		Expect(errors.Is(wantErr, native.ErrTooLarge)).To(BeTrue(), "%v", wantErr)
		progs, errs, err := native.CompileBatch(context.Background(), []*ir.Program{big, good}, opts())
		Expect(err).NotTo(HaveOccurred())
		Expect(progs[0]).To(BeNil())
		Expect(errs[0]).To(MatchError(wantErr.Error()))
		Expect(errors.Is(errs[0], native.ErrTooLarge)).To(BeTrue())
		Expect(errs[1]).NotTo(HaveOccurred())
		DeferCleanup(progs[1].Close)
		Expect(run(progs[1], "score", in)["cls"].I64).To(HaveLen(2))
	})

	It("fails as a whole when the library does not build, so that the caller builds the programs alone", func() {
		var ps []*ir.Program
		for i, src := range batchPrograms {
			_, p := parse(fmt.Sprintf("b%d.rx", i), src)
			ps = append(ps, p)
		}
		o := opts()
		o.ProgramCC = "cc -DRX_BROKEN=1 -include rx_broken.h"
		_, _, err := native.CompileBatch(context.Background(), ps, o)
		Expect(errors.Is(err, native.ErrCompiler)).To(BeTrue(), "%v", err)
	})
})

//go:build cgo

package native_test

import (
	"context"
	"math"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("RunInto", Label("native"), func() {
	src := `package p

func score(x [B][4]float32, w [4][3]float32) (logits [B][3]float32, cls [B]int64) {
	logits = Tanh(MatMul(x, w))
	cls = Argmax(logits, 1)
	return
}
`
	in := map[string]*tensor.Tensor{
		"x": tensor.FromFloat32([]float32{1, -2, 0.5, 3, 0, 0, 1e-3, -7}, 2, 4),
		"w": tensor.FromFloat32([]float32{0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1, 1.1, -1.2}, 4, 3),
	}

	It("writes Run's results into the caller's tensors without allocating", func() {
		_, p := parse("t.rx", src)
		prog := compile(p)
		want := run(prog, "score", in)
		out := map[string]*tensor.Tensor{"logits": tensor.NewFloat32(2, 3), "cls": tensor.NewInt64(2)}
		ctx := context.Background()
		path, err := prog.RunInto(ctx, "score", in, out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(path)).To(Equal("native"))
		for i, g := range out["logits"].F32 {
			Expect(math.Float32bits(g)).To(Equal(math.Float32bits(want["logits"].F32[i])))
		}
		Expect(out["cls"].I64).To(Equal(want["cls"].I64))
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := prog.RunInto(ctx, "score", in, out); err != nil {
				panic(err)
			}
		})
		Expect(allocs).To(BeZero())
	})

	It("refuses a missing, unknown or mis-shaped output", func() {
		_, p := parse("t.rx", src)
		prog := compile(p)
		ctx := context.Background()
		for _, out := range []map[string]*tensor.Tensor{
			{"logits": tensor.NewFloat32(2, 3)},
			{"logits": tensor.NewFloat32(2, 3), "cls": tensor.NewInt64(2), "extra": tensor.NewInt64(2)},
			{"logits": tensor.NewFloat32(3, 3), "cls": tensor.NewInt64(2)},
			{"logits": tensor.NewFloat32(2, 3), "cls": tensor.NewFloat32(2)},
		} {
			_, err := prog.RunInto(ctx, "score", in, out)
			Expect(err).To(MatchError(ir.ErrShape), "%v", out)
			Expect(err.Error()).To(ContainSubstring("RunInto: "))
		}
	})
})

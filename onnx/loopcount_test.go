package onnx_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// countAssignedInBody is func f(n int64, x [B]float32) (iters int64,
// y [B]float32): count := n; y = x; for i := range count { iters += 1;
// y = y + 1; count += 1 }: the count is read once (Go's rule, and the
// IR's), so iters == max(n, 0).
func countAssignedInBody() *ir.Program {
	b := irtest.NewFunc("f")
	n := b.Param("n", ir.Int64)
	x := b.Param("x", ir.Float32, "B")
	iters := b.Result("iters", ir.Int64)
	y := b.Result("y", ir.Float32, "B")
	b.Op(ir.ConstI, iters).I = 0
	b.Op(ir.Copy, y, x)
	count := b.Val("count", ir.Var, ir.Int64)
	b.Op(ir.Copy, count, n)
	one := b.ConstI(1)
	onef := b.ConstF(1)
	i := b.Val("i", ir.LoopIndex, ir.Int64)
	b.Loop(i, count, func() {
		b.Op(ir.IAdd, iters, iters, one)
		b.Op(ir.Add, y, y, onef)
		b.Op(ir.IAdd, count, count, one)
	})
	return &ir.Program{File: "t.rx", Funcs: []*ir.Func{b.Fn}}
}

var _ = Describe("a loop count the body assigns, exported", func() {
	It("runs max(n, 0) iterations in the ONNX model (Loop's trip count is read once)", func() {
		requireONNX()
		p := countAssignedInBody()
		var cases []evalCase
		for _, n := range []int64{4, 1, 0, -3} {
			in := map[string]*tensor.Tensor{"n": tensor.Scalar(n), "x": tensor.FromFloat32([]float32{0.5, -2, 7}, 3)}
			out, err := fallback.Run(context.Background(), p.Funcs[0], in)
			Expect(err).NotTo(HaveOccurred())
			Expect(out["iters"].I64).To(Equal([]int64{max(n, 0)}), "the fallback, which the model is compared with")
			cases = append(cases, evalCase{name: "n", p: p, fn: "f", inputs: in})
		}
		agree(cases...)
	})
})

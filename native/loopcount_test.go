package native_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// countAssignedInBody is func f(n int64, x [B]float32) (iters int64,
// y [B]float32): count := n; y = x; for i := range count { iters += 1;
// y = y + 1; count += 1 }. The IR allows a loop count that the body
// assigns (an imported model, or a lowering that reuses a variable; the
// .rx checker does not: a count is a constant or a parameter), and its
// contract is Go's: the count is read once, so iters == max(n, 0).
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

var _ = Describe("a loop count the body assigns", func() {
	It("is copied before the loop in the generated C, so the loop's condition never reads the variable", func() {
		src, err := native.Generate(countAssignedInBody())
		Expect(err).NotTo(HaveOccurred())
		s := string(src)
		Expect(s).To(MatchRegexp(`rx_n0 = count[^;]*;\n\s*for \(int64_t i = 0; i < rx_n0; i\+\+\) \{`))
		Expect(strings.Count(s, "< count")).To(BeZero())
	})

	DescribeTable("runs max(n, 0) iterations natively, as the fallback does",
		func(n int64) {
			p := countAssignedInBody()
			prog := compile(p)
			in := map[string]*tensor.Tensor{"n": tensor.Scalar(n), "x": f32(sh(3), 0.5, -2, 7)}
			out := run(prog, "f", in)
			k := max(n, 0)
			Expect(out["iters"].I64).To(Equal([]int64{k}))
			Expect(out["y"].F32).To(Equal([]float32{0.5 + float32(k), -2 + float32(k), 7 + float32(k)}))
			fb, err := fallbackRun(p, "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(fb["iters"].I64).To(Equal(out["iters"].I64))
			Expect(fb["y"].F32).To(Equal(out["y"].F32))
		},
		Entry("n = 4", int64(4)),
		Entry("n = 1", int64(1)),
		Entry("n = 0", int64(0)),
		Entry("n = -3", int64(-3)),
	)
})

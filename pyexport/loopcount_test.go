package pyexport_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/pyexport"
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

var _ = Describe("a loop count the body assigns", func() {
	It("runs max(n, 0) iterations in the exported module, eagerly, under TorchScript and in NumPy", func() {
		p := countAssignedInBody()
		t, n := export(p, pyexport.Torch), export(p, pyexport.NumPy)
		needPython("numpy", "torch")
		want := "4 4.5 1 1.5 0 0.5 0 0.5\n"
		out := runPython(t, `
import torch, gen
s = torch.jit.script(gen.f)
for fn in (gen.f, s):
    r = []
    for k in (4, 1, 0, -3):
        iters, y = fn(k, torch.tensor([0.5], dtype=torch.float32))
        r.append("%d %g" % (int(iters), float(y[0])))
    print(" ".join(r))
`)
		Expect(out).To(Equal(want + want))
		out = runPython(n, `
import numpy as np, gen
r = []
for k in (4, 1, 0, -3):
    iters, y = gen.f(k, np.array([0.5], dtype=np.float32))
    r.append("%d %g" % (int(iters), float(y[0])))
print(" ".join(r))
`)
		Expect(out).To(Equal(want))
	})
})

package irtest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
)

func TestIRTest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "irtest Suite")
}

var _ = Describe("Builder", func() {
	It("numbers values in order and nests instructions in Loop and Cond blocks", func() {
		b := irtest.NewFunc("f")
		x := b.Param("x", ir.Float32, "B", 4)
		n := b.Param("n", ir.Int64)
		y := b.Result("y", ir.Float32, "B", 4)
		b.Op(ir.Copy, y, x)
		i := b.Temp(ir.Int64)
		b.Loop(i, n, func() {
			c := b.Temp(ir.Bool)
			b.Op(ir.Eq, c, i, b.ConstI(0))
			b.Cond(c, func() { b.Op(ir.Tanh, y, y) }, func() { b.Op(ir.Mul, y, y, b.ConstF(0.5)) })
		})
		b.Op(ir.Relu, y, y)
		Expect(b.Fn.Params).To(Equal([]*ir.Value{x, n}))
		Expect(b.Fn.Results).To(Equal([]*ir.Value{y}))
		Expect((&ir.Program{File: "t.rx", Funcs: []*ir.Func{b.Fn}}).String()).To(Equal(`func f(%x.0 [B][4]float32, %n.1 int64) (%y.2 [B][4]float32) { // t.rx:1:1
	%y.2 = copy %x.0 : [B][4]float32
	for %3 = range %n.1 { // t.rx:5:2
		%5 = consti 0 : int64
		%4 = eq %3, %5 : bool
		if %4 { // t.rx:6:3
			%y.2 = tanh %y.2 : [B][4]float32
		} else {
			%6 = constf 0.5 : float32
			%y.2 = mul %y.2, %6 : [B][4]float32
		}
	}
	%y.2 = relu %y.2 : [B][4]float32
}
`))
	})

	It("makes constant and symbolic dims", func() {
		Expect(irtest.Dims(3, "B")).To(Equal([]ir.Dim{{Size: 3}, {Sym: "B"}}))
	})
})

package codegen_test

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/codegen"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
)

var errTrace = errors.New("trace export")

// trace is an Emitter that writes each op as kind(args) and each
// statement in a pseudo-language, so a spec sees what the walker did.
type trace struct{}

func (trace) Ident(v *ir.Value) string {
	if v.Name == "" {
		return ""
	}
	return v.Name
}

func (trace) Op(w *codegen.Walker, in *ir.Op, args []codegen.Expr) codegen.Expr {
	switch in.Kind {
	case ir.ConstF:
		return codegen.Expr{Text: fmt.Sprint(in.F), Prec: 1, Lit: true, F: in.F}
	case ir.ConstI:
		return codegen.Atom(fmt.Sprint(in.I))
	case ir.Softmax:
		w.Fail("%s: no %s here", w.Func().Name, in.Kind)
	}
	texts := make([]string, len(args))
	for i, a := range args {
		texts[i] = a.Text
	}
	return codegen.Atom(strings.ToLower(in.Kind.String()) + "(" + strings.Join(texts, ", ") + ")")
}

func (trace) Standalone(x codegen.Expr) codegen.Expr {
	if x.Lit {
		return codegen.Atom("scalar(" + x.Text + ")")
	}
	return x
}

func (trace) Assign(name string, x codegen.Expr) string { return name + " := " + x.Text }

func (trace) For(w *codegen.Walker, count codegen.Expr, index *ir.Value) ([]codegen.Stmt, string) {
	idx := "_"
	if index != nil {
		idx = w.Name(index)
	}
	return []codegen.Stmt{{Line: "# loop " + idx}}, "for " + idx + " < " + count.Text + ":"
}

func (trace) If(cond codegen.Expr) string { return "if " + cond.Text + ":" }

// folding is trace that folds && and ||.
type folding struct{ trace }

func (folding) Logic(and bool, l, r codegen.Expr) codegen.Expr {
	op := " or "
	if and {
		op = " and "
	}
	return codegen.Expr{Text: l.Paren(2) + op + r.Paren(3), Prec: 2}
}

var layout = codegen.Layout{Indent: "  ", Empty: "pass", ElseIf: "el", Else: "else:", End: "end"}

// walk returns f's body as the trace emitter writes it, with its result.
func walk(f *ir.Func, em codegen.Emitter) string {
	GinkgoHelper()
	w := codegen.New(f, em, errTrace)
	body, err := w.Body()
	Expect(err).NotTo(HaveOccurred())
	var b strings.Builder
	layout.Write(&b, body, 0)
	return b.String()
}

var _ = Describe("Walker", func() {
	It("inlines a temp read once and stores one read twice in _tN", func() {
		b := irtest.NewFunc("f")
		x := b.Param("x", ir.Float32, "B", 4)
		y := b.Result("y", ir.Float32, "B", 4)
		t1 := b.Temp(ir.Float32, "B", 4)
		b.Op(ir.Tanh, t1, x)
		t2 := b.Temp(ir.Float32, "B", 4)
		b.Op(ir.Exp, t2, t1)
		b.Op(ir.Add, y, t2, t2)
		Expect(walk(b.Fn, trace{})).To(Equal("_t3 := exp(tanh(x))\ny := add(_t3, _t3)\n"))
	})

	It("stores a pending expression that reads a variable before the variable is overwritten", func() {
		b := irtest.NewFunc("swap")
		x := b.Param("x", ir.Float32, "B")
		a := b.Result("a", ir.Float32, "B")
		c := b.Result("c", ir.Float32, "B")
		b.Op(ir.Copy, a, x)
		t := b.Temp(ir.Float32, "B")
		b.Op(ir.Neg, t, a)
		b.Op(ir.Tanh, a, x)
		b.Op(ir.Copy, c, t)
		Expect(walk(b.Fn, trace{})).To(Equal("a := x\n_t3 := neg(a)\na := tanh(x)\nc := _t3\n"))
	})

	It("writes a float literal alone as a scalar and keeps it a literal inside an op", func() {
		b := irtest.NewFunc("lit")
		x := b.Param("x", ir.Float32, "B")
		y := b.Result("y", ir.Float32, "B")
		z := b.Result("z", ir.Float32)
		b.Op(ir.Mul, y, x, b.ConstF(0.5))
		b.Op(ir.Copy, z, b.ConstF(2))
		Expect(walk(b.Fn, trace{})).To(Equal("y := mul(x, 0.5)\nz := scalar(2)\n"))
	})

	It("keeps a for a for and an if an if, with an else-if chain and the emitter's lines before a loop", func() {
		b := irtest.NewFunc("flow")
		n := b.Param("n", ir.Int64)
		y := b.Result("y", ir.Int64)
		i := b.Val("i", ir.LoopIndex, ir.Int64)
		b.Op(ir.Copy, y, b.ConstI(0))
		b.Loop(i, n, func() {
			c := b.Temp(ir.Bool)
			b.Op(ir.Eq, c, i, b.ConstI(0))
			b.Cond(c, func() { b.Op(ir.IAdd, y, y, b.ConstI(1)) }, func() {
				d := b.Temp(ir.Bool)
				b.Op(ir.Lt, d, i, b.ConstI(3))
				b.Cond(d, func() { b.Op(ir.ISub, y, y, i) }, func() {})
			})
		})
		b.Loop(nil, n, func() {})
		Expect(walk(b.Fn, trace{})).To(Equal(`y := 0
# loop i
for i < n:
  if eq(i, 0):
    y := iadd(y, 1)
  elif lt(i, 3):
    y := isub(y, i)
  end
end
# loop _
for _ < n:
  pass
end
`))
	})

	It("folds the lowering of && for a LogicFolder and leaves it as statements otherwise", func() {
		b := irtest.NewFunc("and")
		p := b.Param("p", ir.Bool)
		q := b.Param("q", ir.Bool)
		y := b.Result("y", ir.Bool)
		t := b.Val("", ir.Var, ir.Bool)
		b.Op(ir.Copy, t, p)
		b.Cond(t, func() {
			nq := b.Temp(ir.Bool)
			b.Op(ir.Not, nq, q)
			b.Op(ir.Copy, t, nq)
		}, nil)
		b.Op(ir.Copy, y, t)
		Expect(walk(b.Fn, folding{})).To(Equal("y := p and not(q)\n"))

		w := codegen.New(b.Fn, trace{}, errTrace)
		_, err := w.Body()
		Expect(err).To(MatchError(errTrace))
		Expect(err.Error()).To(ContainSubstring("is read before it is written"))
	})

	It("lists variables, results and stored temps as declared, not parameters and loop indices", func() {
		b := irtest.NewFunc("decl")
		x := b.Param("x", ir.Float32, "B")
		y := b.Result("y", ir.Float32, "B")
		v := b.Val("v", ir.Var, ir.Float32, "B")
		i := b.Val("i", ir.LoopIndex, ir.Int64)
		t := b.Temp(ir.Float32, "B")
		b.Op(ir.Tanh, t, x)
		b.Op(ir.Add, v, t, t)
		b.Loop(i, b.ConstI(2), func() { b.Op(ir.Copy, y, v) })
		w := codegen.New(b.Fn, trace{}, errTrace)
		w.Declare("_n1")
		_, err := w.Body()
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Declared()).To(Equal([]string{"y", "v", "_n1", "_t4"}))
		Expect(w.LoopOf(i)).NotTo(BeNil())
		Expect(w.LoopOf(x)).To(BeNil())
	})

	It("refuses a checked op without its site, and returns an emitter's Fail, wrapping the error of New", func() {
		b := irtest.NewFunc("bad")
		n := b.Param("n", ir.Int64)
		y := b.Result("y", ir.Int64)
		b.Op(ir.CheckedRem, y, n, n)
		_, err := codegen.New(b.Fn, trace{}, errTrace).Body()
		Expect(err).To(MatchError(errTrace))
		Expect(err.Error()).To(Equal("trace export: bad: checkedrem without a site"))

		b = irtest.NewFunc("soft")
		x := b.Param("x", ir.Float32, "B", 4)
		s := b.Result("s", ir.Float32, "B", 4)
		b.Op(ir.Softmax, s, x).Axis = 1
		_, err = codegen.New(b.Fn, trace{}, errTrace).Body()
		Expect(err).To(MatchError(errTrace))
		Expect(err.Error()).To(Equal("trace export: soft: no softmax here"))
	})
})

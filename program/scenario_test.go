package program_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

var _ = Describe("ParseScenario", func() {
	scenarioErr := func(src string) string {
		_, err := program.ParseScenario("t.rx", []byte(src))
		if err == nil {
			return ""
		}
		return err.Error()
	}

	It("accepts what Parse accepts when the file can run as a scenario", func() {
		src := "//rx:input x normal(0, 1)\n//rx:input n const(-9007199254740992)\npackage p\nfunc f(x [B][4]float32, n int64) (y [B][4]float32) { y = x; for range n { y = Tanh(y) }; return }\n"
		_, err := program.ParseScenario("t.rx", []byte(src))
		Expect(err).NotTo(HaveOccurred())
	})

	It("evaluates _ = expr for its effect, and _ cannot be read or declared", func() {
		head := "//rx:input x normal(0, 1)\n//rx:input n const(0)\npackage p\nfunc f(x [B][4]float32, n int64) (y [B][4]float32) {\n"
		f, err := program.ParseScenario("t.rx", []byte(head+"\t_ = CheckedDiv(7, n)\n\t_ = Tanh(x)\n\ty = x\n\treturn\n}\n"))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.String()).To(MatchRegexp(`(?i)checked.?div`), "the checked division is kept: its error is the function's")
		Expect(scenarioErr(head + "\ty = _\n\treturn\n}\n")).To(ContainSubstring("t.rx:5:6:"))
		Expect(scenarioErr(head + "\t_ := Tanh(x)\n\ty = x\n\treturn\n}\n")).To(ContainSubstring("the blank identifier _ cannot be declared here"))
	})

	It("rejects a file without functions, which Parse accepts", func() {
		_, err := program.Parse("t.rx", []byte("// nothing here\npackage p\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(scenarioErr("// nothing here\npackage p\n")).To(Equal("t.rx:2:1: no scoring function: a scenario needs at least one func, like func score(x [B][F]float32) (y [B][C]float32)"))
	})

	It("reports every scenario error with the checker's, in position order", func() {
		msg := scenarioErr("//rx:input q normal(0, 1)\npackage p\nfunc f(x [B][K]float32, k [B]int64) (y [B][K]float32) { y = Tanh(x); return }\nfunc g(x [B]float32) (y [B]float32) { y = Softplus(x); return }\n")
		Expect(strings.Split(msg, "\n")).To(Equal([]string{
			"t.rx:1:1: //rx:input q: no function has a parameter q",
			"t.rx:3:8: parameter x of f has no //rx:input directive: add one like //rx:input x normal(0, 1)",
			"t.rx:3:14: symbolic dimension K of f has no value when it runs: only the batch dimension B takes its sizes (from //rx:batches); give K a size, like const K = 16",
			"t.rx:3:25: parameter k of f is an int64 tensor ([B]int64): a scenario's inputs are generated, as float32 tensors or int64 scalars only",
			"t.rx:4:43: unknown function Softplus: want one of MatMul, Transpose, Tanh, Exp, Log, Sigmoid, Relu, Abs, Sqrt, Maximum, Minimum, Softmax, LogSoftmax, Sum, Mean, Max, Argmax, CheckedRem, CheckedDiv",
		}))
	})

	It("does not report a parameter whose //rx:input is malformed as missing one", func() {
		Expect(scenarioErr("//rx:input x normal(0)\npackage p\nfunc f(x [B]float32) (y [B]float32) { y = x; return }\n")).
			To(Equal(`t.rx:1:1: //rx:input x: bad distribution: "normal(0)": normal takes 2 argument(s): normal(mean, std) with std >= 0`))
	})
})

var _ = Describe("loop bounds", func() {
	It("accept an integer constant expression, negative or zero included (no iteration, as in Go)", func() {
		for _, bound := range []string{"-3", "0", "C", "-C", "(2*F - 1)", "+1"} {
			_, err := program.Parse("t.rx", []byte(header+"func f(x [B]float32) (y [B]float32) { y = x; for range "+bound+" { y = Tanh(y) }; return }"))
			Expect(err).NotTo(HaveOccurred(), bound)
		}
	})

	It("accept an int64 scalar local, which the body may assign (the count is read once, as in Go)", func() {
		f, err := program.Parse("t.rx", []byte(header+`func f(x [B]float32, k int64) (y [B]float32) {
	y = x
	n := k + 2
	m := C
	for i := range n {
		n = n - 1
		for range m {
			m = CheckedRem(m+i, 2)
			y = Tanh(y)
		}
	}
	return
}`))
		Expect(err).NotTo(HaveOccurred())
		loop := f.Funcs[0].Body[3].(*program.For)
		Expect(loop.Count).To(BeAssignableToTypeOf(&program.VarRef{}))
		Expect(loop.Count.(*program.VarRef).Var.Kind).To(Equal(program.LocalVar))
	})

	It("still refuse a non-constant expression, and an int64 input must stay within 2^53", func() {
		Expect(parseErr(`func f(x [B]float32, n int64) (y [B]float32) { y = x; for range n + 1 { y = Tanh(y) }; return }`)).
			To(Equal("t.rx:7:65: loop bound n + 1 must be an integer constant, an int64 scalar parameter or an int64 scalar local variable"))
		Expect(parseErr("//rx:input n const(9007199254740994)\nfunc f(n int64) (q int64) { q = n; return }")).
			To(Equal("t.rx:7:1: //rx:input n: an int64 parameter takes const(N) with an integer N between -2^53 and 2^53 (distribution arguments are float64, exact up to 2^53)"))
	})
})

package program_test

import (
	"errors"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// header is prepended to test bodies: a package clause and two constants.
const header = "package p\n\nconst F = 4\nconst C = 3\n\n\n"

// parseErr parses src (header + body) and returns its error text.
func parseErr(body string) string {
	_, err := program.Parse("t.rx", []byte(header+body))
	if err == nil {
		return ""
	}
	Expect(errors.Is(err, program.ErrInvalid)).To(BeTrue())
	return err.Error()
}

var _ = Describe("Parse", func() {
	It("checks the reference scoring function and its directives", func() {
		src, err := os.ReadFile("testdata/score_linear.rx")
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse("score_linear.rx", src)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Scenario).To(Equal("small-batch-scoring"))
		Expect(f.Batches).To(Equal([]int{1, 16, 128}))
		Expect(f.Seed).To(Equal(uint64(20261202)))
		Expect(f.HasSeed).To(BeTrue())
		d, ok := f.Input("w")
		Expect(ok).To(BeTrue())
		Expect(d).To(Equal(tensor.Dist{Kind: tensor.Normal, A: 0, B: 0.3}))
		fn := f.Func("score_linear")
		Expect(fn).NotTo(BeNil())
		Expect(fn.Syms).To(Equal([]string{"B"}))
		Expect(fn.Params[0].Type.String()).To(Equal("[B][32]float32"))
		Expect(fn.Results[2].Type.String()).To(Equal("[B]int64"))
		Expect(fn.Locks).To(HaveLen(1))
		Expect(fn.Locks[0].Text).To(Equal("for (int64_t round_idx = 0; round_idx < 4; round_idx++)"))
		Expect(fn.Locks[0].Pos.String()).To(Equal("score_linear.rx:15:3"))
	})

	It("accepts every op and statement form", func() {
		_, err := program.Parse("t.rx", []byte(header+`
func all(x [B][F]float32, w [C][F]float32, s float32, n int64, phase int64) (y [B][C]float32, m [B][1]float32, k [B]int64, t [F][B]float32, q int64) {
	h := MatMul(x, Transpose(w))
	h = h - Mean(h, 1, true)
	h = h / Sqrt(Sum(h*h, -1, true) + 1e-6)
	h += Maximum(h, 0) - Minimum(h, -0.5) * s
	h = Relu(h) + Abs(-h) + Sigmoid(h) + Exp(h) - Log(Abs(h) + 1)
	q = 0
	for i := range n {
		for range 2 {
			if CheckedRem(i+phase, 2) == 0 && !(i > 3) || CheckedDiv(i, 2) != 1 {
				h = Tanh(h)
				q = q + i*2 - 1
			} else if i >= 7 {
				h = LogSoftmax(h, 1)
			} else {
				h = -h
			}
		}
	}
	y = Softmax(h, 1)
	m = Max(y, 1, true)
	k = Argmax(y, 1)
	t = Transpose(x)
	return
}`))
		Expect(err).NotTo(HaveOccurred())
	})

	It("returns every independent error of a file, sorted by position", func() {
		msg := parseErr(`
func f(x [B]float64) (y [B]float32) {
	y = Foo(x)
	return
}

func g(x [B]float32) (y [B]float32) {
	y = x
	return
}
//rx:bogus
`)
		lines := strings.Split(msg, "\n")
		Expect(lines).To(HaveLen(3))
		Expect(lines[0]).To(HavePrefix("t.rx:8:13: unsupported element type float64"))
		Expect(lines[1]).To(HavePrefix("t.rx:9:6: unknown function Foo"))
		Expect(lines[2]).To(HavePrefix("t.rx:17:1: unknown directive //rx:bogus"))
	})

	DescribeTable("rejects a malformed program with a positioned message",
		func(body, want string) {
			Expect(parseErr(body)).To(ContainSubstring(want))
		},
		Entry("not Go syntax", `func f( {`, "t.rx:7:9: syntax error: expected"),
		Entry("a float64 parameter", `func f(x [B]float64) (y [B]float32) { y = Tanh(x); return }`,
			"t.rx:7:13: unsupported element type float64: the supported element types are float32 and int64"),
		Entry("an int32 result", `func f(x [B]float32) (y [B]int32) { return }`,
			"t.rx:7:28: unsupported element type int32"),
		Entry("a slice type", `func f(x []float32) (y [2]float32) { return }`,
			"t.rx:7:10: slice types are not allowed"),
		Entry("rank 5", `func f(x [1][1][1][1][1]float32) (y [1]float32) { return }`,
			"rank 5 is too high: tensors have rank 0 to 4"),
		Entry("an unknown op", `func f(x [B]float32) (y [B]float32) { y = Softplus(x); return }`,
			"t.rx:7:43: unknown function Softplus: want one of MatMul, Transpose"),
		Entry("wrong arity", `func f(x [B]float32) (y [B]float32) { y = Tanh(x, x); return }`,
			"t.rx:7:43: wrong number of arguments to Tanh: got 2, want 1: Tanh(x)"),
		Entry("a MatMul inner-dimension mismatch", `func f(x [B][F]float32, w [C][C]float32) (y [B][C]float32) { y = MatMul(x, w); return }`,
			"t.rx:7:66: MatMul inner dimensions differ: x is [B][4]float32 and w is [3][3]float32 (4 vs 3)"),
		Entry("MatMul of a rank-1 tensor", `func f(x [F]float32, w [F][C]float32) (y [C]float32) { y = MatMul(x, w); return }`,
			"MatMul needs two rank-2 tensors, got [4]float32 and [4][3]float32"),
		Entry("a non-broadcastable +", `func f(x [B][F]float32, b [C]float32) (y [B][F]float32) { y = x + b; return }`,
			"t.rx:7:65: cannot broadcast x ([B][4]float32) with b ([3]float32) in +: 4 vs 3 (dimensions must be equal or 1)"),
		Entry("an axis out of range", `func f(x [B][C]float32) (y [B][C]float32) { y = Softmax(x, 2); return }`,
			"t.rx:7:60: axis 2 is out of range for Softmax of a rank-2 tensor (want -2 to 1)"),
		Entry("a non-constant axis", `func f(x [B][C]float32, n int64) (y [B][C]float32) { y = Softmax(x, n); return }`,
			"axis of Softmax must be an integer constant, not n"),
		Entry("a tensor-valued if", `func f(x [B]float32) (y [B]float32) { y = x; if x { y = -x }; return }`,
			"t.rx:7:49: if condition x is a tensor ([B]float32): conditions must compare integer scalars"),
		Entry("a comparison of tensors", `func f(x [B]float32) (y [B]float32) { y = x; if Sum(x, 0) > 0 { y = -x }; return }`,
			"comparison Sum(x, 0) > 0 needs int64 scalars on both sides, not float32 and int64"),
		Entry("a float loop bound", `func f(x [B]float32) (y [B]float32) { y = x; for i := range 2.5 { y = Tanh(y) }; return }`,
			"t.rx:7:61: loop bound 2.5 must be an integer constant, an int64 scalar parameter or an int64 scalar local variable"),
		Entry("a tensor loop bound", `func f(x [B]float32) (y [B]float32) { y = x; for i := range x { y = Tanh(y) }; return }`,
			"t.rx:7:61: loop bound x is [B]float32: want an integer constant, an int64 scalar parameter or an int64 scalar local variable"),
		Entry("a float local loop bound", `func f(x [B]float32) (y [B]float32) { y = x; s := Sum(x, 0); for range s { y = Tanh(y) }; return }`,
			"t.rx:7:72: loop bound s is float32: want an integer constant"),
		Entry("an int64 result as a loop bound", `func f(x [B]float32) (y [B]float32, q int64) { y = x; q = 2; for range q { y = Tanh(y) }; return }`,
			"t.rx:7:72: loop bound q is a result: want an integer constant, an int64 scalar parameter or an int64 scalar local variable (copy it first: n := q)"),
		Entry("a loop index as a loop bound", `func f(x [B]float32) (y [B]float32) { y = x; for i := range 3 { for range i { y = Tanh(y) } }; return }`,
			"t.rx:7:75: loop bound i is a loop index: want an integer constant, an int64 scalar parameter or an int64 scalar local variable (copy it first: n := i)"),
		Entry("an undefined loop bound", `func f(x [B]float32) (y [B]float32) { y = x; for range m { y = Tanh(y) }; return }`,
			"t.rx:7:56: undefined: m"),
		Entry("a computed loop bound", `func f(x [B]float32) (y [B]float32) { y = x; n := 3; for range n - 1 { y = Tanh(y) }; return }`,
			"t.rx:7:64: loop bound n - 1 must be an integer constant, an int64 scalar parameter or an int64 scalar local variable"),
		Entry("a three-clause for", `func f(x [B]float32) (y [B]float32) { y = x; for i := 0; i < 3; i = i + 1 { y = Tanh(y) }; return }`,
			"only `for i := range N` loops are supported"),
		Entry("a result never assigned", `func f(x [B]float32) (y [B]float32, z [B]float32) { y = x; return }`,
			"t.rx:7:60: result z is not assigned on every path to this return"),
		Entry("a result assigned on one branch only", `func f(x [B]float32, n int64) (y [B]float32) { if n > 0 { y = x }; return }`,
			"result y is not assigned on every path to this return"),
		Entry("a result assigned only in a loop that may not run", `func f(x [B]float32, n int64) (y [B]float32) { for range n { y = x }; return }`,
			"result y is not assigned on every path to this return"),
		Entry("a result read before it is assigned", `func f(x [B]float32) (y [B]float32) { y = y + x; return }`,
			"t.rx:7:43: result y is used before it is assigned"),
		Entry("a reassignment that changes shape", `func f(x [B][F]float32) (y [B][F]float32) { h := x; h = Sum(x, 1, true); y = h; return }`,
			"cannot assign [B][1]float32 to h ([B][4]float32): reassignment changes the shape (dimension 1: 4 vs 1)"),
		Entry("a reassignment that changes dtype", `func f(x [B][F]float32) (y [B][F]float32) { h := x; h = Argmax(x, 1); y = h; return }`,
			"cannot assign [B]int64 to h ([B][4]float32): reassignment keeps dtype and shape"),
		Entry("use before declaration", `func f(x [B]float32) (y [B]float32) { y = h; h := x; return }`,
			"t.rx:7:43: h is used before its declaration at t.rx:7:46"),
		Entry("an undefined name", `func f(x [B]float32) (y [B]float32) { y = zz; return }`,
			"t.rx:7:43: undefined: zz"),
		Entry("a symbolic dimension bound two ways", `func f(x [K]float32, a [F]float32, c [C]float32) (y [K]float32) { y = x + a; z := x + c; return }`,
			"symbolic dimension K is bound two ways: to 4 at t.rx:7:73 and to 3 here"),
		Entry("a result dimension no parameter binds", `func f(x [B]float32) (y [N]float32) { return }`,
			"t.rx:7:26: symbolic dimension N does not appear in any parameter, so no input can bind it"),
		Entry("a duplicate function", `func f(x [B]float32) (y [B]float32) { y = x; return }
func f(x [B]float32) (y [B]float32) { y = x; return }`,
			"t.rx:8:1: function f redeclared in this file (first declared at t.rx:7:1)"),
		Entry("an unknown directive", "//rx:frobnicate yes\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			"t.rx:7:1: unknown directive //rx:frobnicate: want one of scenario, batches, seed, input, tolerance, expect-error"),
		Entry("a malformed distribution", "//rx:input x normal(0)\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`t.rx:7:1: //rx:input x: bad distribution: "normal(0)": normal takes 2 argument(s): normal(mean, std) with std >= 0`),
		Entry("an unknown distribution", "//rx:input x gamma(1, 2)\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`unknown distribution "gamma", want one of normal, uniform, const, edge`),
		Entry("an input for no parameter", "//rx:input q normal(0, 1)\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			"//rx:input q: no function has a parameter q"),
		Entry("a lock outside a function", "//rx:lock \"for\"\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			"t.rx:7:1: //rx:lock must be written inside the body of the function it checks"),
		Entry("a lock with a bad regexp", "func f(x [B]float32) (y [B]float32) {\n\t//rx:lock `for (`\n\ty = x\n\treturn\n}",
			"t.rx:8:2: //rx:lock: bad regexp: error parsing regexp"),
		Entry("an unquoted lock", "func f(x [B]float32) (y [B]float32) {\n\t//rx:lock for\n\ty = x\n\treturn\n}",
			`//rx:lock wants one non-empty quoted argument: "literal text" or `+"`regexp`"),
		Entry("a file directive inside a function", "func f(x [B]float32) (y [B]float32) {\n\t//rx:seed 3\n\ty = x\n\treturn\n}",
			"t.rx:8:2: //rx:seed is a file-level directive: write it outside any function"),
		Entry("a bad tolerance", "//rx:tolerance y rtol=-1 atol=0\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:tolerance: "rtol=-1": want //rx:tolerance OUTPUT rtol=R atol=A, or ulp=N, or all three, with non-negative numbers (N an integer)`),
		Entry("a fractional ulp", "//rx:tolerance y ulp=1.5\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:tolerance: "ulp=1.5": want //rx:tolerance OUTPUT rtol=R atol=A, or ulp=N, or all three`),
		Entry("ulp given twice", "//rx:tolerance y ulp=1 ulp=2\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:tolerance: "ulp=2": want`),
		Entry("for= naming the oracle", "//rx:tolerance y ulp=1 for=torch,oracle\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`t.rx:7:1: //rx:tolerance: for=torch,oracle: "oracle" is not an executor a tolerance can apply to (want names like for=torch,onnxruntime; never oracle, the reference)`),
		Entry("for= with an empty name", "//rx:tolerance y ulp=1 for=torch,\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:tolerance: for=torch,: "" is not an executor`),
		Entry("for= given twice", "//rx:tolerance y ulp=1 for=torch for=numpy\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:tolerance: "for=numpy": for= given twice`),
		Entry("for= without a bound", "//rx:tolerance y for=torch\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:tolerance: want //rx:tolerance OUTPUT rtol=R atol=A, or ulp=N`),
		Entry("a tolerance on an int64 result", "//rx:tolerance c rtol=1e-3\nfunc f(x [B][4]float32) (c [B]int64) { c = Argmax(x, 1); return }",
			"t.rx:7:1: //rx:tolerance: result c is int64 and compared exactly: a tolerance applies to float32 results only; remove the directive"),
		Entry("a seed given twice", "//rx:seed 1\n//rx:seed 2\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			"t.rx:8:1: //rx:seed given twice (first at t.rx:7:1)"),
		Entry("bad batches", "//rx:batches 1 zero\nfunc f(x [B]float32) (y [B]float32) { y = x; return }",
			`//rx:batches: "zero" is not a batch size`),
		Entry("a missing return", `func f(x [B]float32) (y [B]float32) { y = x }`,
			"t.rx:7:45: missing return at end of function f"),
		Entry("an early return", `func f(x [B]float32, n int64) (y [B]float32) { y = x; if n > 0 { return }; return }`,
			"return is only allowed as the last statement of a function"),
		Entry("assignment to a parameter", `func f(x [B]float32) (y [B]float32) { x = -x; y = x; return }`,
			"t.rx:7:39: cannot assign to parameter x: parameters are read-only"),
		Entry("assignment to a loop index", `func f(x [B]float32) (y [B]float32) { y = x; for i := range 3 { i = 2 }; return }`,
			"cannot assign to loop index i"),
		Entry("shadowing", `func f(x [B]float32) (y [B]float32) { y = x; for i := range 3 { x := y; y = x }; return }`,
			"x redeclared (first declared at t.rx:7:8)"),
		Entry("integer division", `func f(x [B]float32) (y [B]float32, q int64) { y = x; q = 7 / 2 + 1; q = q / 2; return }`,
			"integer division is not supported: use CheckedDiv(a, b)"),
		Entry("the % operator", `func f(x [B]float32, n int64) (y [B]float32) { y = x; if n % 2 == 0 { y = -x }; return }`,
			"operator % is not supported: use CheckedRem(a, b)"),
		Entry("an int scalar mixed into a tensor", `func f(x [B]float32) (y [B]float32) { y = x; for i := range 3 { y = y * i }; return }`,
			"mismatched types in y * i: [B]float32 and int64"),
		Entry("CheckedRem of a tensor", `func f(x [B]float32) (y [B]float32, q int64) { y = x; q = CheckedRem(x, 2); return }`,
			"argument 1 of CheckedRem is [B]float32, want an int64 scalar"),
		Entry("indexing", `func f(x [B]float32) (y [B]float32) { y = x; z := x[0]; return }`,
			"indexing and slicing (x[0]) are not supported"),
		Entry("a method", `func (r R) f(x [B]float32) (y [B]float32) { y = x; return }`,
			"methods are not allowed"),
		Entry("a package-level var", `var v = 3
func f(x [B]float32) (y [B]float32) { y = x; return }`,
			"t.rx:7:1: only const and func declarations are allowed at package level, not var"),
		Entry("a float constant", `const Z = 1.5
func f(x [B]float32) (y [B]float32) { y = x; return }`,
			"constant value 1.5 is not an integer"),
		Entry("unnamed results", `func f(x [B]float32) [B]float32 { return x }`,
			"every result needs a name"),
		Entry("an unused expression", `func f(x [B]float32) (y [B]float32) { y = x; Tanh(x); return }`,
			"the value of Tanh(x) is not used"),
	)

	It("reports imports", func() {
		_, err := program.Parse("t.rx", []byte("package p\n\nimport \"fmt\"\n\nfunc f(x [B]float32) (y [B]float32) { y = x; return }"))
		Expect(err).To(MatchError(ContainSubstring("t.rx:3:8: imports are not allowed")))
	})

	It("unifies symbols with MatMul and broadcasting", func() {
		f, err := program.Parse("t.rx", []byte(header+`func f(x [B][K]float32, w [F][N]float32, b [C]float32) (y [B][N]float32) { y = MatMul(x, w); z := MatMul(x, w) + b; return }`))
		Expect(err).NotTo(HaveOccurred())
		fn := f.Funcs[0]
		Expect(fn.Params[0].Type.String()).To(Equal("[B][4]float32"))
		Expect(fn.Params[1].Type.String()).To(Equal("[4][3]float32"))
		Expect(fn.Results[0].Type.String()).To(Equal("[B][3]float32"))
		Expect(fn.Syms).To(Equal([]string{"B"}))
	})

	It("normalises negative axes and keepdims shapes", func() {
		f, err := program.Parse("t.rx", []byte(header+`func f(x [B][F]float32) (y [B][1]float32, z [F]float32) { y = Sum(x, -1, true); z = Max(x, 0); return }`))
		Expect(err).NotTo(HaveOccurred())
		ret := f.Funcs[0].Body[0].(*program.Assign).Value.(*program.Call)
		Expect(ret.Axis).To(Equal(1))
		Expect(ret.KeepDims).To(BeTrue())
	})

	It("types Argmax(x, axis, true) with the axis kept with size 1, and lowers it with keepdims", func() {
		f, err := program.Parse("t.rx", []byte(header+`func f(x [B][F]float32) (c [B][1]int64, d [1][F]int64, e [B]int64) { c = Argmax(x, -1, true); d = Argmax(x, 0, true); e = Argmax(x, 1, false); return }`))
		Expect(err).NotTo(HaveOccurred())
		c := f.Funcs[0].Body[0].(*program.Assign).Value.(*program.Call)
		Expect(c.Axis).To(Equal(1))
		Expect(c.KeepDims).To(BeTrue())
		Expect(c.Type().String()).To(Equal("[B][1]int64"))
		Expect(f.Funcs[0].Body[1].(*program.Assign).Value.Type().String()).To(Equal("[1][4]int64"))
		Expect(f.Funcs[0].Body[2].(*program.Assign).Value.Type().String()).To(Equal("[B]int64"))
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.String()).To(ContainSubstring("argmax %x.0 axis=1 keepdims=true : [B][1]int64"))
		Expect(p.String()).To(ContainSubstring("argmax %x.0 axis=0 keepdims=true : [1][4]int64"))

		_, err = program.Parse("t.rx", []byte(header+`func f(x [B][F]float32) (c [B]int64) { c = Argmax(x, 1, true); return }`))
		Expect(err).To(MatchError(ContainSubstring("[B][1]int64")))
		_, err = program.Parse("t.rx", []byte(header+`func f(x [B][F]float32) (c [B]int64) { c = Argmax(x, 1, 1); return }`))
		Expect(err).To(MatchError(ContainSubstring("t.rx:7:57: keepdims argument of Argmax must be true or false")))
		_, err = program.Parse("t.rx", []byte(header+`func f(x [B][F]float32) (c [B]int64) { c = Argmax(x); return }`))
		Expect(err).To(MatchError(ContainSubstring("wrong number of arguments to Argmax: got 1, want 2 or 3: Argmax(x, axis) or Argmax(x, axis, true)")))
	})
})

var _ = Describe("Lower", func() {
	It("prints the reference function deterministically", func() {
		src, err := os.ReadFile("testdata/score_linear.rx")
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse("score_linear.rx", src)
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		want, err := os.ReadFile("testdata/score_linear.ir")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.String()).To(Equal(string(want)))
		p2, _ := program.Lower(f)
		Expect(p2.String()).To(Equal(p.String()))
	})

	It("keeps && short-circuit: the right side runs inside the branch", func() {
		f, err := program.Parse("t.rx", []byte(header+`func f(n int64) (q int64) { q = 0; if n > 0 && CheckedRem(10, n) == 0 { q = 1 }; return }`))
		Expect(err).NotTo(HaveOccurred())
		p, _ := program.Lower(f)
		var rems, topRems int
		for _, in := range p.Funcs[0].Body {
			if op, ok := in.(*ir.Op); ok && op.Kind == ir.CheckedRem {
				topRems++
			}
		}
		ir.Walk(p.Funcs[0].Body, func(in ir.Instr) {
			if op, ok := in.(*ir.Op); ok && op.Kind == ir.CheckedRem {
				rems++
				Expect(*op.Site).To(Equal(ir.Site{Func: "f", Builtin: "CheckedRem", LHS: "dividend", Pos: "t.rx:7:48"}))
			}
		})
		Expect(rems).To(Equal(1))
		Expect(topRems).To(Equal(0))
	})
})

var _ = Describe("Lower on a hand-built tree", func() {
	It("reports a node the checker never produces as an error, not a panic", func() {
		v := &program.Var{Name: "y", Kind: program.ResultVar, Type: ir.Type{DType: ir.Float32}}
		f := &program.File{Name: "h.rx", Funcs: []*program.Func{{Name: "f", Results: []*program.Var{v},
			Body: []program.Stmt{&program.Assign{Var: v, Value: nil}}}}}
		_, err := program.Lower(f)
		Expect(errors.Is(err, program.ErrInvalid)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("lower: unexpected expression <nil> (not a checked tree)")))
	})
})

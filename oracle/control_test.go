package oracle_test

import (
	"context"
	"errors"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// counter builds f(n int64) (count int64) { count = 0; for i := range n { count = count + 1 }; return }
// with body extra statements appended inside the loop.
func counter() *program.Func {
	b := newFunc("f")
	n := b.param("n", i64())
	c := b.result("count", i64())
	i := b.index("i")
	return b.body(
		assign(c, ilit(0)),
		forN(i, ref(n), assign(c, bin(program.Add, ref(c), ilit(1)))),
		ret(),
	)
}

func runInts(fn *program.Func, ins map[string]int64) (map[string]*tensor.Tensor, error) {
	m := map[string]*tensor.Tensor{}
	for k, v := range ins {
		m[k] = tensor.Scalar(v)
	}
	return oracle.Run(context.Background(), fn, m)
}

var _ = Describe("control flow and integers", func() {
	DescribeTable("a for loop runs max(count, 0) times",
		func(n, want int64) {
			out, err := runInts(counter(), map[string]int64{"n": n})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["count"].DType).To(Equal(tensor.Int64))
			Expect(out["count"].Shape).To(BeEmpty())
			Expect(out["count"].I64).To(Equal([]int64{want}))
		},
		Entry("count 3", int64(3), int64(3)),
		Entry("count 0 runs nothing", int64(0), int64(0)),
		Entry("negative count runs nothing", int64(-5), int64(0)),
		Entry("MinInt64 runs nothing", int64(math.MinInt64), int64(0)),
	)

	It("runs `for range N` without an index variable", func() {
		b := newFunc("f")
		x := b.param("x", f32(2))
		y := b.result("y", f32(2))
		fn := b.body(assign(y, ref(x)), forN(nil, ilit(3), assign(y, bin(program.Mul, ref(y), flit(2)))), ret())
		out, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(2), 1, -0.5)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["y"].F64).To(Equal([]float64{8, -4}))
	})

	It("sets the index to 0, 1, ... and reads the count once", func() {
		// sum = 0; for i := range n { sum = sum + i; n = n - 1 } -- n is a local copy here.
		b := newFunc("f")
		p := b.param("p", i64())
		sum := b.result("sum", i64())
		n := b.local("n", i64())
		i := b.index("i")
		fn := b.body(
			define(n, ref(p)),
			assign(sum, ilit(0)),
			forN(i, ref(n),
				assign(sum, bin(program.Add, ref(sum), ref(i))),
				assign(n, bin(program.Sub, ref(n), ilit(1)))),
			ret(),
		)
		out, err := runInts(fn, map[string]int64{"p": 5})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["sum"].I64).To(Equal([]int64{0 + 1 + 2 + 3 + 4}))
	})

	It("runs the DESIGN rounds: even rounds halve, odd rounds apply Tanh", func() {
		b := newFunc("f")
		x := b.param("x", f32(2))
		y := b.result("y", f32(2))
		r := b.index("round_idx")
		fn := b.body(
			assign(y, ref(x)),
			forN(r, ilit(4),
				ifElse(bin(program.Eq, call(program.CheckedRem, ref(r), ilit(2)), ilit(0)),
					stmts(assign(y, bin(program.Mul, ref(y), flit(0.5)))),
					stmts(assign(y, call(program.Tanh, ref(y)))))),
			ret(),
		)
		out, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(2), 2, -8)})
		Expect(err).NotTo(HaveOccurred())
		for i, v := range []float64{2, -8} {
			want := math.Tanh(math.Tanh(v*0.5) * 0.5)
			Expect(out["y"].F64[i]).To(BeNumerically("~", want, 1e-15))
		}
	})

	It("follows if / else if / else chains", func() {
		// if n < 0 { r = -1 } else if n == 0 { r = 0 } else { r = 1 }
		b := newFunc("f")
		n := b.param("n", i64())
		r := b.result("r", i64())
		fn := b.body(
			ifElse(bin(program.Lt, ref(n), ilit(0)),
				stmts(assign(r, neg(ilit(1)))),
				stmts(ifElse(bin(program.Eq, ref(n), ilit(0)),
					stmts(assign(r, ilit(0))),
					stmts(assign(r, ilit(1)))))),
			ret(),
		)
		for n, want := range map[int64]int64{-7: -1, 0: 0, 9: 1} {
			out, err := runInts(fn, map[string]int64{"n": n})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["r"].I64).To(Equal([]int64{want}), "n=%d", n)
		}
	})

	DescribeTable("integer comparisons and !",
		func(op program.BinaryOp, a, c int64, want bool) {
			b := newFunc("f")
			x := b.param("a", i64())
			y := b.param("b", i64())
			r := b.result("r", i64())
			fn := b.body(ifElse(not(bin(op, ref(x), ref(y))), stmts(assign(r, ilit(0))), stmts(assign(r, ilit(1)))), ret())
			out, err := runInts(fn, map[string]int64{"a": a, "b": c})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["r"].I64[0] == 1).To(Equal(want))
		},
		Entry("==", program.Eq, int64(2), int64(2), true),
		Entry("!=", program.Ne, int64(2), int64(2), false),
		Entry("<", program.Lt, int64(1), int64(2), true),
		Entry("<=", program.Le, int64(3), int64(2), false),
		Entry(">", program.Gt, int64(3), int64(2), true),
		Entry(">=", program.Ge, int64(2), int64(2), true),
	)

	It("wraps integer + - * and unary - in two's complement", func() {
		b := newFunc("f")
		n := b.param("n", i64())
		add := b.result("add", i64())
		sub := b.result("sub", i64())
		mul := b.result("mul", i64())
		ng := b.result("neg", i64())
		fn := b.body(
			assign(add, bin(program.Add, ref(n), ilit(1))),
			assign(sub, bin(program.Sub, neg(ref(n)), ilit(2))),
			assign(mul, bin(program.Mul, ref(n), ilit(2))),
			assign(ng, neg(bin(program.Add, ref(n), ilit(1)))),
			ret(),
		)
		out, err := runInts(fn, map[string]int64{"n": math.MaxInt64})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["add"].I64[0]).To(Equal(int64(math.MinInt64)))
		Expect(out["sub"].I64[0]).To(Equal(int64(math.MaxInt64)))
		Expect(out["mul"].I64[0]).To(Equal(int64(-2)))
		Expect(out["neg"].I64[0]).To(Equal(int64(math.MinInt64)))
	})

	It("evaluates every returned value before storing any, so return b, a swaps", func() {
		b := newFunc("f")
		x := b.param("x", i64())
		r1 := b.result("a", i64())
		r2 := b.result("b", i64())
		fn := b.body(
			assign(r1, ref(x)),
			assign(r2, bin(program.Add, ref(x), ilit(1))),
			ret(ref(r2), ref(r1)),
		)
		out, err := runInts(fn, map[string]int64{"x": 10})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["a"].I64[0]).To(Equal(int64(11)))
		Expect(out["b"].I64[0]).To(Equal(int64(10)))
	})

	Describe("checked arithmetic", func() {
		// f(a, b int64) (q int64) { q = CheckedX(a, b); return }, call at t.rx:5:7.
		checked := func(bi program.Builtin) *program.Func {
			b := newFunc("f")
			a := b.param("i", i64())
			d := b.param("d", i64())
			q := b.result("q", i64())
			return b.body(assign(q, call(bi, ref(a), ref(d))), ret())
		}

		DescribeTable("values with Go's truncating semantics",
			func(bi program.Builtin, a, d, want int64) {
				out, err := runInts(checked(bi), map[string]int64{"i": a, "d": d})
				Expect(err).NotTo(HaveOccurred())
				Expect(out["q"].I64[0]).To(Equal(want))
			},
			Entry("7 % 3", program.CheckedRem, int64(7), int64(3), int64(1)),
			Entry("-7 % 3", program.CheckedRem, int64(-7), int64(3), int64(-1)),
			Entry("7 % -3", program.CheckedRem, int64(7), int64(-3), int64(1)),
			Entry("MinInt64 % -1 is 0", program.CheckedRem, int64(math.MinInt64), int64(-1), int64(0)),
			Entry("-7 / 2", program.CheckedDiv, int64(-7), int64(2), int64(-3)),
			Entry("MinInt64 / 1", program.CheckedDiv, int64(math.MinInt64), int64(1), int64(math.MinInt64)),
		)

		It("pins CheckedRem by zero", func() {
			_, err := runInts(checked(program.CheckedRem), map[string]int64{"i": 3, "d": 0})
			Expect(err).To(MatchError("f: CheckedRem: division by zero (i=3) at t.rx:5:7"))
			Expect(errors.Is(err, ir.ErrDivisionByZero)).To(BeTrue())
			var re *ir.RuntimeError
			Expect(errors.As(err, &re)).To(BeTrue())
		})

		It("pins CheckedDiv by zero", func() {
			_, err := runInts(checked(program.CheckedDiv), map[string]int64{"i": -4, "d": 0})
			Expect(err).To(MatchError("f: CheckedDiv: division by zero (i=-4) at t.rx:5:7"))
			Expect(errors.Is(err, ir.ErrDivisionByZero)).To(BeTrue())
		})

		It("pins CheckedDiv(MinInt64, -1) as an overflow", func() {
			_, err := runInts(checked(program.CheckedDiv), map[string]int64{"i": math.MinInt64, "d": -1})
			Expect(err).To(MatchError("f: CheckedDiv: integer overflow (i=-9223372036854775808, divisor -1) at t.rx:5:7"))
			Expect(errors.Is(err, ir.ErrOverflow)).To(BeTrue())
		})

		It("stops the loop at the failing iteration", func() {
			// for i := range 10 { q = CheckedRem(10, 3 - i) } fails at i == 3.
			b := newFunc("f")
			q := b.result("q", i64())
			i := b.index("i")
			c := call(program.CheckedRem, ilit(10), bin(program.Sub, ilit(3), ref(i))).(*program.Call)
			c.ArgText = []string{"10", "3 - i"}
			fn := b.body(assign(q, ilit(0)), forN(i, ilit(10), assign(q, c)), ret())
			_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{})
			Expect(err).To(MatchError("f: CheckedRem: division by zero (dividend=10) at t.rx:5:7"))
		})
	})

	Describe("short-circuit && and ||", func() {
		// if n > 0 && CheckedRem(7, n) == 1 { r = 1 } else { r = 0 }
		guarded := func(op program.BinaryOp, left program.BinaryOp) *program.Func {
			b := newFunc("f")
			n := b.param("n", i64())
			r := b.result("r", i64())
			rhs := bin(program.Eq, call(program.CheckedRem, ilit(7), ref(n)), ilit(1))
			return b.body(
				ifElse(bin(op, bin(left, ref(n), ilit(0)), rhs), stmts(assign(r, ilit(1))), stmts(assign(r, ilit(0)))),
				ret(),
			)
		}

		It("skips the right side of && when the left is false", func() {
			out, err := runInts(guarded(program.AndAnd, program.Gt), map[string]int64{"n": 0})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["r"].I64[0]).To(Equal(int64(0)))
		})

		It("evaluates the right side of && when the left is true", func() {
			out, err := runInts(guarded(program.AndAnd, program.Gt), map[string]int64{"n": 3})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["r"].I64[0]).To(Equal(int64(1)))
			out, err = runInts(guarded(program.AndAnd, program.Gt), map[string]int64{"n": 4})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["r"].I64[0]).To(Equal(int64(0)))
		})

		It("skips the right side of || when the left is true", func() {
			out, err := runInts(guarded(program.OrOr, program.Eq), map[string]int64{"n": 0})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["r"].I64[0]).To(Equal(int64(1)))
		})

		It("evaluates the right side of || when the left is false (and its error surfaces)", func() {
			_, err := runInts(guarded(program.OrOr, program.Ne), map[string]int64{"n": 0})
			Expect(errors.Is(err, ir.ErrDivisionByZero)).To(BeTrue())
		})
	})

	Describe("cancellation", func() {
		It("refuses to start with a cancelled context", func() {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := oracle.Run(ctx, counter(), map[string]*tensor.Tensor{"n": tensor.Scalar(1)})
			Expect(errors.Is(err, context.Canceled)).To(BeTrue())
		})

		It("stops a long loop when the deadline passes", func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := oracle.Run(ctx, counter(), map[string]*tensor.Tensor{"n": tensor.Scalar(math.MaxInt64)})
			Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue())
			Expect(err.Error()).To(HavePrefix("f: "))
		})
	})

	Describe("trees the checker should never produce", func() {
		It("reports a result never assigned as ErrInternal", func() {
			b := newFunc("f")
			b.result("y", f32(2))
			_, err := oracle.Run(context.Background(), b.body(ret()), map[string]*tensor.Tensor{})
			Expect(errors.Is(err, oracle.ErrInternal)).To(BeTrue())
			Expect(err).To(MatchError(ContainSubstring("result y was never assigned")))
		})

		It("reports a non-broadcastable pair as ErrInternal, not a panic", func() {
			b := newFunc("f")
			x := b.param("x", f32(2))
			y := b.param("y", f32(3))
			z := b.result("z", f32(3))
			fn := b.body(assign(z, bin(program.Add, ref(x), ref(y))), ret())
			_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(2), 1, 2), "y": t32(sh(3), 1, 2, 3)})
			Expect(errors.Is(err, oracle.ErrInternal)).To(BeTrue())
			Expect(err).To(MatchError(ContainSubstring("shapes [2] and [3] do not broadcast")))
		})

		It("reports an assignment of the wrong shape as ErrInternal", func() {
			b := newFunc("f")
			x := b.param("x", f32(2, 3))
			y := b.result("y", f32(2, 3))
			fn := b.body(assign(y, callAxis(program.Sum, ref(x), 1, false)), ret())
			_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(2, 3), 1, 2, 3, 4, 5, 6)})
			Expect(errors.Is(err, oracle.ErrInternal)).To(BeTrue())
		})

		It("recovers a panic at the Run boundary", func() {
			b := newFunc("f")
			y := b.result("y", i64())
			fn := b.body(assign(y, &program.VarRef{At: at(2, 1)}), ret()) // nil Var
			var err error
			Expect(func() { _, err = oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{}) }).NotTo(Panic())
			Expect(errors.Is(err, oracle.ErrInternal)).To(BeTrue())
			Expect(err.Error()).To(HavePrefix("f: oracle internal error: panic: "))
		})
	})
})

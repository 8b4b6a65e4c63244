package fallback_test

import (
	"context"
	"errors"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// countingFn is func f(n int64) (iters int64, last int64): iters counts
// the iterations of `for i := range n`, last is the final index (-1 if
// none), and n itself is incremented in the body to prove the count is read
// once.
func countingFn() *ir.Func {
	b := irtest.NewFunc("f")
	n := b.Param("n", ir.Int64)
	iters := b.Result("iters", ir.Int64)
	last := b.Result("last", ir.Int64)
	b.Op(ir.ConstI, last).I = -1
	count := b.Val("count", ir.Var, ir.Int64)
	b.Op(ir.Copy, count, n)
	one := b.ConstI(1)
	i := b.Val("i", ir.LoopIndex, ir.Int64)
	b.Loop(i, count, func() {
		b.Op(ir.IAdd, iters, iters, one)
		b.Op(ir.Copy, last, i)
		b.Op(ir.IAdd, count, count, one)
	})
	return b.Fn
}

var _ = Describe("control flow", func() {
	DescribeTable("for runs max(n, 0) iterations with the count read once",
		func(n, iters, last int64) {
			out, err := run(countingFn(), inputs{"n": tensor.Scalar(n)})
			Expect(err).NotTo(HaveOccurred())
			Expect(out["iters"].I64).To(Equal([]int64{iters}))
			Expect(out["last"].I64).To(Equal([]int64{last}))
		},
		Entry("n = 4", int64(4), int64(4), int64(3)),
		Entry("n = 1", int64(1), int64(1), int64(0)),
		Entry("n = 0 runs nothing", int64(0), int64(0), int64(-1)),
		Entry("negative n runs nothing", int64(-3), int64(0), int64(-1)),
	)

	It("runs the four-round branch of the design's example", func() {
		// logits = x; for r := range 4 { if CheckedRem(r, 2) == 0 { logits = logits * 0.5 } else { logits = Tanh(logits) } }
		b := irtest.NewFunc("rounds")
		x := b.Param("x", ir.Float32, "B", 2)
		logits := b.Result("logits", ir.Float32, "B", 2)
		b.Op(ir.Copy, logits, x)
		four, two, zero := b.ConstI(4), b.ConstI(2), b.ConstI(0)
		r := b.Val("round_idx", ir.LoopIndex, ir.Int64)
		b.Loop(r, four, func() {
			rem, eq := b.Temp(ir.Int64), b.Temp(ir.Bool)
			b.Op(ir.CheckedRem, rem, r, two).Site = &ir.Site{Func: "rounds", Builtin: "CheckedRem", LHS: "round_idx", Pos: "t.rx:9:6"}
			b.Op(ir.Eq, eq, rem, zero)
			b.Cond(eq, func() {
				half := b.ConstF(0.5)
				t := b.Temp(ir.Float32, "B", 2)
				b.Op(ir.Mul, t, logits, half)
				b.Op(ir.Copy, logits, t)
			}, func() {
				t := b.Temp(ir.Float32, "B", 2)
				b.Op(ir.Tanh, t, logits)
				b.Op(ir.Copy, logits, t)
			})
		})
		out, err := run(b.Fn, inputs{"x": f32([]float32{0, 4}, 1, 2)})
		Expect(err).NotTo(HaveOccurred())
		// 4 -> 2 -> tanh(2) -> tanh(2)/2 -> tanh(tanh(2)/2); tanh(2) = 0.9640276, tanh(0.4820138) = 0.4478...
		Expect(out["logits"].F32[0]).To(Equal(float32(0)))
		Expect(out["logits"].F32[1]).To(BeNumerically("~", 0.44790, 1e-4))
	})

	It("stops when the context is cancelled before or during a run", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := fallback.Run(ctx, countingFn(), inputs{"n": tensor.Scalar(1)})
		Expect(errors.Is(err, context.Canceled)).To(BeTrue())
		Expect(err.Error()).To(Equal("f: context canceled"))

		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err = fallback.Run(ctx, countingFn(), inputs{"n": tensor.Scalar(1 << 62)})
		Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue())
	})

	It("returns zeros for a named result the body never writes", func() {
		b := irtest.NewFunc("f")
		b.Param("x", ir.Float32, "B")
		b.Result("y", ir.Float32, "B", 2)
		b.Result("k", ir.Int64)
		out, err := run(b.Fn, inputs{"x": tensor.NewFloat32(3)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["y"].F32).To(Equal(make([]float32, 6)))
		Expect(out["k"].I64).To(Equal([]int64{0}))
	})
})

var _ = Describe("memory safety", func() {
	// func f(x [B][2]float32, c [B]int64) (y [B][2]float32, z [B][2]float32, k [B]int64)
	// { y = x; z = x; y = y * 2; k = c }
	aliasFn := func() *ir.Func {
		b := irtest.NewFunc("f")
		x := b.Param("x", ir.Float32, "B", 2)
		c := b.Param("c", ir.Int64, "B")
		y := b.Result("y", ir.Float32, "B", 2)
		z := b.Result("z", ir.Float32, "B", 2)
		k := b.Result("k", ir.Int64, "B")
		b.Op(ir.Copy, y, x)
		b.Op(ir.Copy, z, x)
		b.Op(ir.Mul, y, y, b.ConstF(2))
		b.Op(ir.Copy, k, c)
		return b.Fn
	}

	It("never writes the inputs and never returns memory shared with them", func() {
		in := inputs{"x": f32([]float32{1, 2, 3, 4}, 2, 2), "c": tensor.FromInt64([]int64{7, 8}, 2)}
		before := digest(in)
		out, err := run(aliasFn(), in)
		Expect(err).NotTo(HaveOccurred())
		Expect(digest(in)).To(Equal(before))
		Expect(out["y"].F32).To(Equal([]float32{2, 4, 6, 8}))
		Expect(out["z"].F32).To(Equal([]float32{1, 2, 3, 4}))
		// Scribbling on the results leaves the inputs and the other results alone.
		out["z"].F32[0], out["k"].I64[0] = 100, 100
		Expect(digest(in)).To(Equal(before))
		Expect(out["y"].F32[0]).To(Equal(float32(2)))
	})

	It("serves concurrent runs from one Interpreter", func() {
		it, err := fallback.New(aliasFn())
		Expect(err).NotTo(HaveOccurred())
		Expect(it.Func().Name).To(Equal("f"))
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for g := range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				for rep := range 50 {
					v := float32(g*1000 + rep)
					out, err := it.Run(context.Background(), inputs{
						"x": f32([]float32{v, v + 1}, 1, 2), "c": tensor.FromInt64([]int64{int64(v)}, 1)})
					if err != nil {
						errs[g] = err
						return
					}
					if out["y"].F32[0] != 2*v || out["y"].F32[1] != 2*(v+1) || out["k"].I64[0] != int64(v) {
						errs[g] = errors.New("a run saw another run's values")
						return
					}
				}
			})
		}
		wg.Wait()
		for _, e := range errs {
			Expect(e).NotTo(HaveOccurred())
		}
	})
})

package ort_test

import (
	"context"
	"unsafe"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Prepared.RunResult and Result.Release", func() {
	src := `package p

func score(x [B][4]float32, w [4][3]float32, d int64) (logits [B][3]float32, cls [B]int64, r int64) {
	logits = Tanh(MatMul(x, w))
	cls = Argmax(logits, 1)
	r = CheckedRem(7, d)
	return
}
`
	inputs := func(batch int, seed uint64, d int64) map[string]*tensor.Tensor {
		return map[string]*tensor.Tensor{
			"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, seed, batch, 4),
			"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 99, 4, 3),
			"d": tensor.Scalar(d),
		}
	}
	prepare := func(e ort.Executor) *ort.Prepared {
		GinkgoHelper()
		f, p := compile(src)
		pr, err := e.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pr.Close)
		return pr.(*ort.Prepared)
	}
	same := func(got, want map[string]*tensor.Tensor) {
		GinkgoHelper()
		Expect(got).To(HaveLen(len(want)))
		for name, w := range want {
			Expect(got[name].Shape).To(Equal(w.Shape), name)
			Expect(got[name].I64).To(Equal(w.I64), name)
			Expect(len(got[name].F32)).To(Equal(len(w.F32)), name)
			for i := range w.F32 { // bit for bit
				Expect(got[name].F32[i]).To(BeIdenticalTo(w.F32[i]), "%s[%d]", name, i)
			}
		}
	}
	clone := func(out map[string]*tensor.Tensor) map[string]*tensor.Tensor {
		c := map[string]*tensor.Tensor{}
		for k, t := range out {
			c[k] = t.Clone()
		}
		return c
	}
	data := func(t *tensor.Tensor) unsafe.Pointer {
		if t.DType == tensor.Int64 {
			return unsafe.Pointer(&t.I64[0])
		}
		return unsafe.Pointer(&t.F32[0])
	}

	It("give Run's outputs, bit for bit, and let the next run of the same shapes write into the released memory", func() {
		needLibrary()
		for _, e := range both() {
			pr := prepare(e)
			ctx := context.Background()
			for _, batch := range []int{1, 5, 300} {
				for seed := uint64(1); seed <= 3; seed++ {
					in := inputs(batch, seed, 3)
					want, err := pr.Run(ctx, "score", in)
					Expect(err).NotTo(HaveOccurred())
					r, err := pr.RunResult(ctx, "score", in)
					Expect(err).NotTo(HaveOccurred())
					same(clone(r.Outputs), want.Outputs)
					Expect(r.Outputs["cls"].Shape).To(Equal([]int{batch}))
					Expect(r.Outputs["r"].I64).To(Equal([]int64{1}))
					r.Release()
					Expect(r.Outputs).To(BeNil())
					r.Release() // idempotent
				}
			}
			in := inputs(64, 7, 3)
			first, err := pr.RunResult(ctx, "score", in)
			Expect(err).NotTo(HaveOccurred())
			mem := data(first.Outputs["logits"])
			first.Release()
			reused := 0
			for range 10 {
				r, err := pr.RunResult(ctx, "score", in)
				Expect(err).NotTo(HaveOccurred())
				if data(r.Outputs["logits"]) == mem {
					reused++
				}
				r.Release()
			}
			Expect(reused).To(Equal(10), "%s: released output memory is written again, every time", e.Name())
		}
	})

	It("never give a released block to a run of other shapes, nor to plain Run", func() {
		needLibrary()
		pr := prepare(ort.Executor{Library: libPath()})
		ctx := context.Background()
		r, err := pr.RunResult(ctx, "score", inputs(3, 1, 3))
		Expect(err).NotTo(HaveOccurred())
		released := data(r.Outputs["logits"])
		r.Release()
		in := inputs(4, 2, 3)
		got, err := pr.RunResult(ctx, "score", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Outputs["logits"].Shape).To(Equal([]int{4, 3}))
		want, err := pr.Run(ctx, "score", in)
		Expect(err).NotTo(HaveOccurred())
		same(got.Outputs, want.Outputs)
		Expect(data(want.Outputs["logits"])).NotTo(Equal(released))

		// Batches in turn: each finds its own released block.
		got.Release()
		a, err := pr.RunResult(ctx, "score", inputs(3, 1, 3))
		Expect(err).NotTo(HaveOccurred())
		Expect(data(a.Outputs["logits"])).To(Equal(released), "batch 3's block waited while batch 4 ran")
		a.Release()

		r, err = pr.RunResult(ctx, "score", in)
		Expect(err).NotTo(HaveOccurred())
		released = data(r.Outputs["logits"])
		r.Release()
		for range 5 {
			out, err := pr.Run(ctx, "score", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(data(out.Outputs["logits"])).NotTo(Equal(released), "Run's outputs are the caller's to keep")
		}
	})

	It("keep the latest released blocks when more batch sizes run than it keeps, so the newest size reuses its memory", func() {
		needLibrary()
		pr := prepare(ort.Executor{Library: libPath()})
		ctx := context.Background()
		// More sizes than the free list holds, each run once, as the
		// harness runs its batches; then the last size again.
		for _, batch := range []int{1, 2, 3, 4, 5, 6} {
			r, err := pr.RunResult(ctx, "score", inputs(batch, 1, 3))
			Expect(err).NotTo(HaveOccurred())
			r.Release()
		}
		in := inputs(7, 1, 3)
		r, err := pr.RunResult(ctx, "score", in)
		Expect(err).NotTo(HaveOccurred())
		mem := data(r.Outputs["logits"])
		r.Release()
		for range 3 {
			r, err := pr.RunResult(ctx, "score", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(data(r.Outputs["logits"])).To(Equal(mem), "batch 7's released block is kept, an older one dropped")
			r.Release()
		}
	})

	It("return the program's runtime error, and the block, when a run fails", func() {
		needLibrary()
		pr := prepare(ort.Executor{Library: libPath()})
		ctx := context.Background()
		f, p := compile(src)
		fb, err := fallback.Executor{}.Prepare(ctx, f, p)
		Expect(err).NotTo(HaveOccurred())
		_, want := fb.Run(ctx, "score", inputs(2, 1, 0))
		Expect(want).To(MatchError(ir.ErrDivisionByZero))
		for range 3 {
			r, err := pr.RunResult(ctx, "score", inputs(2, 1, 0))
			Expect(r).To(BeNil())
			Expect(err).To(MatchError(ir.ErrDivisionByZero))
			Expect(err.Error()).To(Equal(want.Error()), "the fallback's text")
			Expect(err.Error()).To(HavePrefix("score: CheckedRem: division by zero"))
		}
		r, err := pr.RunResult(ctx, "score", inputs(2, 1, 3))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Outputs["r"].I64).To(Equal([]int64{1}))
		_, err = pr.RunResult(ctx, "nope", inputs(2, 1, 3))
		Expect(err).To(MatchError(ContainSubstring(`no function "nope"`)))
	})
})

//go:build cgo

package native_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Result.Release", Label("native"), func() {
	src := `package p

func score(x [B][4]float32, w [4][3]float32) (logits [B][3]float32, cls [B]int64) {
	logits = Tanh(MatMul(x, w))
	cls = Argmax(logits, 1)
	return
}
`
	inputs := func(batch int, seed uint64) map[string]*tensor.Tensor {
		return map[string]*tensor.Tensor{
			"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, seed, batch, 4),
			"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 99, 4, 3),
		}
	}
	// clone copies a Result's outputs before it is released.
	clone := func(out map[string]*tensor.Tensor) map[string]*tensor.Tensor {
		c := map[string]*tensor.Tensor{}
		for k, t := range out {
			c[k] = t.Clone()
		}
		return c
	}

	It("lets the next Run of the same sizes reuse the outputs, with the results a fresh Run gives", func() {
		_, p := parse("t.rx", src)
		prog := compile(p)
		ctx := context.Background()
		for _, batch := range []int{1, 5, 300} {
			for seed := uint64(1); seed <= 3; seed++ {
				in := inputs(batch, seed)
				want := run(compile(p), "score", in)
				r, err := prog.Run(ctx, "score", in)
				Expect(err).NotTo(HaveOccurred())
				sameOutputBits(clone(r.Outputs), want)
				Expect(r.Outputs["logits"].Shape).To(Equal([]int{batch, 3}))
				Expect(r.Outputs["cls"].Shape).To(Equal([]int{batch}))
				r.Release()
				Expect(r.Outputs).To(BeNil())
				r.Release() // idempotent
			}
		}
		in := inputs(64, 7)
		allocs := testing.AllocsPerRun(100, func() {
			r, err := prog.Run(ctx, "score", in)
			if err != nil {
				panic(err)
			}
			r.Release()
		})
		Expect(allocs).To(BeZero())
	})

	It("does not hand a released Result's memory to a Run of other sizes", func() {
		_, p := parse("t.rx", src)
		prog := compile(p)
		ctx := context.Background()
		r, err := prog.Run(ctx, "score", inputs(3, 1))
		Expect(err).NotTo(HaveOccurred())
		r.Release()
		in := inputs(4, 2)
		got, err := prog.Run(ctx, "score", in)
		Expect(err).NotTo(HaveOccurred())
		sameOutputBits(got.Outputs, run(compile(p), "score", in))
	})

	It("does nothing for a Result of the fallback", func() {
		_, p := parse("t.rx", src)
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, Mode: native.Auto, CC: "/nonexistent/cc"})
		Expect(err).NotTo(HaveOccurred())
		defer prog.Close()
		r, err := prog.Run(context.Background(), "score", inputs(2, 1))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(r.Path)).To(Equal("fallback"))
		r.Release()
		Expect(r.Outputs).NotTo(BeNil())
	})
})

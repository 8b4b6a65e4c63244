//go:build cgo

package native_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("a prepared positional call", Label("native"), func() {
	// positional returns a call's inputs and fresh outputs by position,
	// and the outputs by name.
	positional := func(k *native.Call, in, into map[string]*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
		var ins, outs []*tensor.Tensor
		for _, name := range k.Params() {
			ins = append(ins, in[name])
		}
		for _, name := range k.Results() {
			outs = append(outs, into[name])
		}
		return ins, outs
	}

	It("computes what RunInto computes, allocating nothing, for the reference functions", func() {
		f, err := scenarios.Lookup("reference.rx")
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		prog := compile(p)
		ctx := context.Background()
		for _, fn := range []string{"score_linear", "score_mlp", "score_pipeline"} {
			k, err := prog.Prepare(fn)
			Expect(err).NotTo(HaveOccurred())
			for _, batch := range []int{1, 100} {
				in, err := harness.GenerateInputs(f, f.Func(fn), batch, f.Seed, nil)
				Expect(err).NotTo(HaveOccurred())
				want := run(prog, fn, in)
				into := map[string]*tensor.Tensor{}
				for name, t := range want {
					if t.DType == tensor.Int64 {
						into[name] = tensor.NewInt64(t.Shape...)
					} else {
						into[name] = tensor.NewFloat32(t.Shape...)
					}
				}
				ins, outs := positional(k, in, into)
				path, err := k.RunInto(ctx, ins, outs)
				Expect(err).NotTo(HaveOccurred())
				Expect(string(path)).To(Equal("native"))
				sameOutputBits(into, want)
				allocs := testing.AllocsPerRun(50, func() {
					if _, err := k.RunInto(ctx, ins, outs); err != nil {
						panic(err)
					}
				})
				Expect(allocs).To(BeZero())
			}
		}
	})

	It("fails as RunInto does, with the same texts", func() {
		_, p := parse("t.rx", `package p

func score(x [B][4]float32, w [4][3]float32) (logits [B][3]float32) {
	logits = MatMul(x, w)
	return
}
`)
		prog := compile(p)
		ctx := context.Background()
		k, err := prog.Prepare("score")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Params()).To(Equal([]string{"x", "w"}))
		Expect(k.Results()).To(Equal([]string{"logits"}))
		x, w, out := tensor.NewFloat32(2, 4), tensor.NewFloat32(4, 3), tensor.NewFloat32(2, 3)
		cases := []struct {
			ins, outs []*tensor.Tensor
			in, into  map[string]*tensor.Tensor
		}{
			{[]*tensor.Tensor{x, nil}, []*tensor.Tensor{out}, map[string]*tensor.Tensor{"x": x}, map[string]*tensor.Tensor{"logits": out}},
			{[]*tensor.Tensor{x, tensor.NewFloat32(5, 3)}, []*tensor.Tensor{out}, map[string]*tensor.Tensor{"x": x, "w": tensor.NewFloat32(5, 3)}, map[string]*tensor.Tensor{"logits": out}},
			{[]*tensor.Tensor{x, w}, []*tensor.Tensor{tensor.NewFloat32(3, 3)}, map[string]*tensor.Tensor{"x": x, "w": w}, map[string]*tensor.Tensor{"logits": tensor.NewFloat32(3, 3)}},
			{[]*tensor.Tensor{x, w}, []*tensor.Tensor{nil}, map[string]*tensor.Tensor{"x": x, "w": w}, map[string]*tensor.Tensor{}},
		}
		for _, c := range cases {
			_, want := prog.RunInto(ctx, "score", c.in, c.into)
			Expect(want).To(HaveOccurred())
			_, got := k.RunInto(ctx, c.ins, c.outs)
			Expect(got).To(MatchError(want.Error()))
		}
		_, err = k.RunInto(ctx, []*tensor.Tensor{x}, []*tensor.Tensor{out})
		Expect(err).To(MatchError(ContainSubstring("1 inputs for 2 parameters")))
		_, err = prog.Prepare("nope")
		Expect(err).To(MatchError(native.ErrUnknownFunc))
		prog.Close()
		_, err = k.RunInto(ctx, []*tensor.Tensor{x, w}, []*tensor.Tensor{out})
		Expect(err).To(MatchError(native.ErrClosed))
	})
})

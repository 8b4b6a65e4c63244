package onnx_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("a loop count the body assigns, exported", func() {
	It("runs max(n, 0) iterations in the ONNX model (Loop's trip count is read once)", func() {
		requireONNX()
		p := irtest.CountAssignedInBody()
		var cases []evalCase
		for _, n := range []int64{4, 1, 0, -3} {
			in := map[string]*tensor.Tensor{"n": tensor.Scalar(n), "x": tensor.FromFloat32([]float32{0.5, -2, 7}, 3)}
			out, err := fallback.Run(context.Background(), p.Funcs[0], in)
			Expect(err).NotTo(HaveOccurred())
			Expect(out["iters"].I64).To(Equal([]int64{max(n, 0)}), "the fallback, which the model is compared with")
			cases = append(cases, evalCase{name: "n", p: p, fn: "f", inputs: in})
		}
		agree(cases...)
	})
})

var _ = Describe("a local loop count the body assigns, exported and imported back", func() {
	It("comes back as a local trip count declared before the loop, which computes what the program does", func() {
		for _, k := range []int64{3, -1, -9} {
			src := fmt.Sprintf("//rx:batches 1 3\n//rx:input x normal(0, 1)\n//rx:input k const(%d)\n", k) + irtest.CountAssignedSource
			f, err := program.Parse("count.rx", []byte(src))
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			roundTrip(f, p, f.Func("f"))
		}
		f, err := program.Parse("count.rx", []byte(irtest.CountAssignedSource))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		model, err := onnx.Export(p, "f", onnx.Meta{Source: f.Name})
		Expect(err).NotTo(HaveOccurred())
		imp, err := onnx.Import(model, onnx.ImportOptions{Source: "f.onnx"})
		Expect(err).NotTo(HaveOccurred())
		// The count n := k + 2 is the local v, and the loop counts to it.
		Expect(string(imp.Source)).To(MatchRegexp(`(?m)^\tv := k \+ 2\n(\t.*\n)*?\tfor range v \{\n`))
	})

	It("declares a computed trip count that is no variable as a local, trip_count", func() {
		f, err := program.Parse("g.rx", []byte(`//rx:input x normal(0, 1)
//rx:input k const(3)
package p

func g(x [B]float32, k int64) (y [B]float32) {
	y = x
	n := k + 2
	for range n {
		y = y * 0.5
	}
	return
}
`))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		roundTrip(f, p, f.Func("g"))
		model, err := onnx.Export(p, "g", onnx.Meta{Source: f.Name})
		Expect(err).NotTo(HaveOccurred())
		imp, err := onnx.Import(model, onnx.ImportOptions{Source: "g.onnx"})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(imp.Source)).To(ContainSubstring("\ttrip_count := k + 2\n\ty = x\n\tfor range trip_count {\n"))
	})
})

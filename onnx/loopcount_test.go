package onnx_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
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

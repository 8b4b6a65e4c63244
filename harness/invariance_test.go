package harness_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// lowered parses and lowers src and returns its function f and file.
func lowered(src string) (*program.File, *ir.Program) {
	GinkgoHelper()
	f, err := program.Parse("inv.rx", []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

const invProgram = `//rx:scenario inv
//rx:input x normal(0, 1)
//rx:input w normal(0, 1)
//rx:input n const(2)
package p

func f(x [B][8]float32, w [8][3]float32, n int64) (rows [B][3]float32, mixed [B][8]float32, colsum [8]float32, both [3]float32, probs [B][3]float32) {
	rows = MatMul(x, w)
	mixed = x - Mean(x, 0, true)
	colsum = Sum(x, 0)
	both = Sum(w, 0)
	probs = Softmax(rows, 1)
	for i := range n {
		probs = probs * 0.5
	}
	return
}
`

var _ = Describe("RowIndependence", func() {
	It("derives from the IR which results keep rows apart", func() {
		_, p := lowered(invProgram)
		sym, deps, ok := harness.RowIndependence(p.Func("f"))
		Expect(ok).To(BeTrue())
		Expect(sym).To(Equal("B"))
		Expect(deps).To(Equal(map[string]harness.RowDependence{
			"rows": harness.RowWise, "mixed": harness.RowMixed, "colsum": harness.RowMixed,
			"both": harness.RowUniform, "probs": harness.RowWise,
		}))
	})

	It("declines a function whose checked division depends on the batch, and keeps one whose does not", func() {
		// CheckedRem of the argmax along the batch: row 0 alone can divide
		// by zero where the whole batch does not.
		_, p := lowered("package p\n\nfunc f(x [B][4]float32, d int64) (out [B][4]float32) {\n\tout = x\n" +
			"\tc := Argmax(Sum(x, 1), 0)\n\tif CheckedRem(d, c) == 0 {\n\t\tout = x * 2.0\n\t}\n\treturn\n}\n")
		_, _, ok := harness.RowIndependence(p.Func("f"))
		Expect(ok).To(BeFalse())
		_, p = lowered("package p\n\nfunc f(x [B][4]float32, d int64) (out [B][4]float32) {\n\tout = x\n" +
			"\tif CheckedRem(d, 3) == 0 {\n\t\tout = x * 2.0\n\t}\n\treturn\n}\n")
		_, deps, ok := harness.RowIndependence(p.Func("f"))
		Expect(ok).To(BeTrue())
		Expect(deps).To(HaveKeyWithValue("out", harness.RowWise))
	})

	It("declines a function with the batch symbol elsewhere than at axis 0", func() {
		_, p := lowered("package p\n\nfunc f(x [B][8]float32, y [8][B]float32) (out [B][8]float32) {\n\tout = x\n\treturn\n}\n")
		_, _, ok := harness.RowIndependence(p.Func("f"))
		Expect(ok).To(BeFalse())
	})
})

var _ = Describe("CheckInvariance", func() {
	f, p := lowered(invProgram)
	fn := f.Func("f")

	run := func(edit func(out map[string]*tensor.Tensor)) harness.InvarianceRun {
		prep, err := fallback.Executor{}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		return func(ctx context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			o, err := prep.Run(ctx, "f", in)
			if err == nil && edit != nil {
				edit(o.Outputs)
			}
			return o.Outputs, err
		}
	}

	It("finds nothing for the fallback, which is row-invariant", func() {
		inputs, err := harness.GenerateInputs(f, fn, 5, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		r := run(nil)
		base, err := r(context.Background(), inputs)
		Expect(err).NotTo(HaveOccurred())
		vs, err := harness.CheckInvariance(context.Background(), p.Func("f"), inputs, base, r)
		Expect(err).NotTo(HaveOccurred())
		Expect(vs).To(BeEmpty())
	})

	It("finds an executor whose result for a row depends on the batch, bit for bit", func() {
		inputs, err := harness.GenerateInputs(f, fn, 5, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		// One ulp on the last element of the buffer: the tail of a vector loop.
		r := run(func(out map[string]*tensor.Tensor) {
			t := out["rows"]
			t.F32[len(t.F32)-1] = math.Nextafter32(t.F32[len(t.F32)-1], float32(math.Inf(1)))
		})
		base, err := r(context.Background(), inputs)
		Expect(err).NotTo(HaveOccurred())
		vs, err := harness.CheckInvariance(context.Background(), p.Func("f"), inputs, base, r)
		Expect(err).NotTo(HaveOccurred())
		Expect(vs).NotTo(BeEmpty())
		Expect(vs[0].Output).To(Equal("rows"))
		Expect(vs[0].Detail).To(MatchRegexp(`^rows: with row 0 alone \(batch 1\), element \[0 2\] is \S+ where the original batch has \S+$`))
	})
})

//go:build cgo

package native_test

import (
	"context"
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Agreement tolerance against the float64 oracle, for logits and probs:
// |native - oracle| <= atol + rtol*|oracle|. Against the fallback the test
// reports the ULP distance and bounds it (the two differ only in tanhf/expf
// versus float64-rounded math).
const (
	agreeRTol   = 1e-5
	agreeATol   = 1e-6
	maxULPVsFB  = 4
	linearSeed  = 20261202
	linearFeats = 32
)

// linearCase draws score_linear's inputs for a batch the way the harness
// does: each input from its //rx:input distribution, seeded from the
// scenario seed and the case name.
func linearCase(f *program.File, batch int) map[string]*tensor.Tensor {
	in := map[string]*tensor.Tensor{}
	shapes := map[string][]int{"x": {batch, linearFeats}, "w": {linearFeats, 8}, "b": {8}}
	for name, shape := range shapes {
		d, ok := f.Input(name)
		Expect(ok).To(BeTrue())
		seed := tensor.DeriveSeed(linearSeed, fmt.Sprintf("score_linear/%d/%s", batch, name))
		in[name] = tensor.Generate(d, seed, shape...)
	}
	return in
}

var _ = Describe("agreement on the DESIGN example", Label("native"), Ordered, func() {
	var file *program.File
	var irp *ir.Program

	BeforeAll(func() {
		file, irp = parse("score_linear.rx", readTestdata("score_linear.rx"))
	})

	DescribeTable("native agrees with the oracle and the fallback",
		func(batch int) {
			prog := compile(irp)
			in := linearCase(file, batch)
			nat := run(prog, "score_linear", in)
			fb, err := fallbackRun(irp, "score_linear", in)
			Expect(err).NotTo(HaveOccurred())
			or, err := oracle.Run(context.Background(), file.Func("score_linear"), in)
			Expect(err).NotTo(HaveOccurred())

			var maxULP int64
			var maxAbs float64
			for _, name := range []string{"logits", "probs"} {
				got, want, other := nat[name].F32, or[name].F64, fb[name].F32
				Expect(got).To(HaveLen(batch * 8))
				for i := range got {
					diff := math.Abs(float64(got[i]) - want[i])
					Expect(diff).To(BeNumerically("<=", agreeATol+agreeRTol*math.Abs(want[i])), "%s[%d]", name, i)
					maxAbs = max(maxAbs, diff)
					maxULP = max(maxULP, ulp(got[i], other[i]))
				}
			}
			nearTies := 0
			for r := range batch {
				row := or["probs"].F64[r*8 : r*8+8]
				best, second := topTwo(row)
				if row[best]-row[second] <= agreeATol+agreeRTol*row[best] {
					nearTies++
					Expect(nat["classes"].I64[r]).To(BeElementOf(int64(best), int64(second)))
					continue
				}
				Expect(nat["classes"].I64[r]).To(Equal(int64(best)), "row %d", r)
			}
			Expect(nat["classes"].I64).To(Equal(fb["classes"].I64))
			Expect(maxULP).To(BeNumerically("<=", maxULPVsFB))
			AddReportEntry(fmt.Sprintf("batch %d", batch), fmt.Sprintf(
				"max |native-oracle| %.3g; max ULP native vs fallback %d; near-ties %d", maxAbs, maxULP, nearTies))
			fmt.Fprintf(GinkgoWriter, "batch %d: max abs vs oracle %.3g, max ULP vs fallback %d, near-ties %d\n", batch, maxAbs, maxULP, nearTies)
		},
		Entry("batch 1", 1),
		Entry("batch 16", 16),
		Entry("batch 128", 128),
	)
})

func topTwo(row []float64) (best, second int) {
	best, second = 0, -1
	for i := 1; i < len(row); i++ {
		switch {
		case row[i] > row[best]:
			best, second = i, best
		case second < 0 || row[i] > row[second]:
			second = i
		}
	}
	return best, second
}

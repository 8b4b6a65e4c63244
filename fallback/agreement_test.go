package fallback_test

import (
	"context"
	"fmt"
	"math"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// Agreement tolerance between the float32 fallback and the float64 oracle
// on the reference function: |got - want| <= agreeATol + agreeRTol*|want|.
// Measured worst case over batches 1, 16, 128 (seed 20261202): 1.1e-7
// absolute on logits, 3.1e-8 on probabilities; the bound is >= 9x that.
const (
	agreeATol = 1e-6
	agreeRTol = 1e-5
)

var _ = Describe("agreement with the oracle", func() {
	src, err := os.ReadFile("../program/testdata/score_linear.rx")
	if err != nil {
		panic(err)
	}
	for _, batch := range []int{1, 16, 128} {
		It(fmt.Sprintf("holds for the four-round scoring function at batch %d (32 features, 8 classes)", batch), func() {
			f, err := program.Parse("score_linear.rx", src)
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			fn := f.Func("score_linear")
			inputs := map[string]*tensor.Tensor{}
			shapes := map[string][]int{"x": {batch, 32}, "w": {32, 8}, "b": {8}}
			for _, prm := range fn.Params {
				d, ok := f.Input(prm.Name)
				Expect(ok).To(BeTrue())
				inputs[prm.Name] = tensor.Generate(d, tensor.DeriveSeed(f.Seed, fmt.Sprintf("%s/score_linear/b%d/%s", f.Scenario, batch, prm.Name)), shapes[prm.Name]...)
			}
			want, err := oracle.Run(context.Background(), fn, inputs)
			Expect(err).NotTo(HaveOccurred())
			got, err := fallback.Run(context.Background(), p.Func("score_linear"), inputs)
			Expect(err).NotTo(HaveOccurred())

			for _, name := range []string{"logits", "probs"} {
				w, g := want[name], got[name]
				Expect(g.Shape).To(Equal([]int{batch, 8}))
				worst := 0.0
				for i := range w.F64 {
					d := math.Abs(float64(g.F32[i]) - w.F64[i])
					worst = max(worst, d)
					Expect(d).To(BeNumerically("<=", agreeATol+agreeRTol*math.Abs(w.F64[i])), "%s at %v", name, tensor.Index(g.Shape, i))
				}
				GinkgoWriter.Printf("batch %d %s: greatest abs diff %.3g\n", batch, name, worst)
			}
			nearTies := 0
			for r := range batch {
				row := want["probs"].F64[r*8 : r*8+8]
				top, second := math.Inf(-1), math.Inf(-1)
				for _, v := range row {
					if v > top {
						top, second = v, top
					} else if v > second {
						second = v
					}
				}
				if top-second <= agreeATol+agreeRTol*top {
					nearTies++
					continue
				}
				Expect(got["classes"].I64[r]).To(Equal(want["classes"].I64[r]), "class of row %d", r)
			}
			GinkgoWriter.Printf("batch %d: %d near-tie rows\n", batch, nearTies)
		})
	}
})

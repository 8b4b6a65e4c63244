package compare_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Outputs", func() {
	var fn *program.Func
	BeforeEach(func() {
		f, err := program.Parse("two.rx", []byte(`package p

func f(x [2]float32) (y [2]float32, z [2]float32) {
	y = x
	z = x
	return
}
`))
		Expect(err).NotTo(HaveOccurred())
		fn = f.Funcs[0]
	})

	tols := map[string]compare.Tolerance{"y": compare.DefaultTolerance(), "z": compare.DefaultTolerance()}
	want := map[string]*tensor.Tensor{
		"y": tensor.FromFloat64([]float64{1, 2}, 2),
		"z": tensor.FromFloat64([]float64{1, 2}, 2),
	}

	It("judges every declared output in result order and names a missing one", func() {
		got := map[string]*tensor.Tensor{"z": tensor.FromFloat32([]float32{1, 3}, 2)}
		metrics, extra := compare.Outputs(fn, want, got, tols, nil)
		Expect(extra).To(BeEmpty())
		Expect(metrics).To(HaveLen(2))
		Expect(metrics[0].Name).To(Equal("y"))
		Expect(metrics[0].OK).To(BeFalse())
		Expect(metrics[0].Problem).To(Equal("missing: the executor returned no output y"))
		Expect(metrics[0].Report).To(Equal("y: missing: the executor returned no output y"))
		Expect(metrics[1].Name).To(Equal("z"))
		Expect(metrics[1].OK).To(BeFalse())
		Expect(metrics[1].Problem).To(BeEmpty())
	})

	It("lists, sorted, the outputs the function does not declare", func() {
		got := map[string]*tensor.Tensor{
			"y": tensor.FromFloat32([]float32{1, 2}, 2),
			"z": tensor.FromFloat32([]float32{1, 2}, 2),
			"w": tensor.FromFloat32([]float32{0}, 1),
			"a": tensor.FromFloat32([]float32{0}, 1),
		}
		metrics, extra := compare.Outputs(fn, want, got, tols, nil)
		for _, m := range metrics {
			Expect(m.OK).To(BeTrue(), m.Report)
		}
		Expect(extra).To(Equal([]string{"a", "w"}))
		Expect(compare.Undeclared(extra)).To(Equal("the executor returned outputs the function does not declare: a, w"))
	})
})

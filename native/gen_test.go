package native_test

import (
	"context"
	"math"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/tensor"
)

func readTestdata(name string) string {
	GinkgoHelper()
	b, err := os.ReadFile("testdata/" + name)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("name safety end to end", Label("native"), func() {
	It("compiles and runs identifiers that are C keywords, libc names, reserved or non-ASCII", func() {
		_, p := parse("names.rx", readTestdata("names.rx"))
		prog := compile(p)
		Expect(native.CFuncName("main")).To(Equal("rx_fn_rx_u_main"))
		out := run(prog, "main", map[string]*tensor.Tensor{
			"int": f32(sh(2), 1, 2), "double": f32(sh(2), 3, -4), "static": tensor.Scalar(2),
		})
		// _x = int*double = [3 -8]; ρ = _x+1 = [4 -7]; größe = max(ρ, double) = [4 -4];
		// two rounds of größe += int: [6 0]; rx_x = static + 0 + 1 = 3.
		Expect(out["malloc"].F32).To(Equal([]float32{6, 0}))
		Expect(out["rx_x"].I64).To(Equal([]int64{3}))
		Expect(out["exit"].F32[0]).To(BeNumerically("~", 1/(1+math.Exp(-4)), 1e-7))
		Expect(out["exit"].F32[1]).To(BeNumerically("~", 1/(1+math.Exp(7)), 1e-9))
		_, err := prog.Run(context.Background(), "main", map[string]*tensor.Tensor{
			"int": f32(sh(2), 1, 2), "double": f32(sh(2), 3, -4), "static": tensor.Scalar(0),
		})
		Expect(err).NotTo(HaveOccurred())
	})
})

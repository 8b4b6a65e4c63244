package native_test

import (
	"context"
	"math"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/tensor"
)

// reuseSrc writes results into buffers that already hold a value: a
// result that starts as a parameter, elementwise ops and reductions whose
// destination is also their operand, in a loop, and a variable copied and
// then overwritten (the copy must keep the old value).
const reuseSrc = `package p

func f(x [B][8]float32, w [8][8]float32, n int64) (y [B][8]float32, s [B]float32, z [B][8]float32) {
	y = x
	s = Sum(x, 1)
	t := MatMul(x, w)
	for i := range n {
		t = Tanh(t)
		t = t - Mean(t, 1, true)
		y = Maximum(y, t)
		s = Sum(t, 1) + s * 0.5
	}
	u := t
	t = Sigmoid(x)
	z = u * 2.0 + t
	return
}
`

// reuseWant computes f in float64 from the float32 inputs, independently
// of every executor, following the program's text.
func reuseWant(x, w []float32, b, n int) (y, s, z []float64) {
	y, s, z = make([]float64, b*8), make([]float64, b), make([]float64, b*8)
	t := make([]float64, b*8)
	for r := range b {
		for j := range 8 {
			y[r*8+j] = float64(x[r*8+j])
			s[r] += float64(x[r*8+j])
			for k := range 8 {
				t[r*8+j] += float64(x[r*8+k]) * float64(w[k*8+j])
			}
		}
	}
	for range n {
		for r := range b {
			mean := 0.0
			for j := range 8 {
				t[r*8+j] = math.Tanh(t[r*8+j])
				mean += t[r*8+j]
			}
			mean /= 8
			sum := 0.0
			for j := range 8 {
				t[r*8+j] -= mean
				y[r*8+j] = math.Max(y[r*8+j], t[r*8+j])
				sum += t[r*8+j]
			}
			s[r] = sum + s[r]*0.5
		}
	}
	for i := range z {
		z[i] = t[i]*2 + 1/(1+math.Exp(-float64(x[i])))
	}
	return y, s, z
}

var _ = Describe("results written into buffers that already hold a value", func() {
	DescribeTable("give the independently computed values in native code, the fallback and the oracle, and leave the inputs as they were",
		func(b, n int) {
			f, p := parse("reuse.rx", reuseSrc)
			r := rand.New(rand.NewPCG(uint64(b), uint64(n)))
			xs, ws := make([]float32, b*8), make([]float32, 64)
			for i := range xs {
				xs[i] = float32(r.NormFloat64())
			}
			for i := range ws {
				ws[i] = float32(r.NormFloat64() * 0.3)
			}
			inputs := func() map[string]*tensor.Tensor {
				return map[string]*tensor.Tensor{"x": tensor.FromFloat32(append([]float32(nil), xs...), b, 8),
					"w": tensor.FromFloat32(append([]float32(nil), ws...), 8, 8), "n": tensor.Scalar(int64(n))}
			}
			wy, wsum, wz := reuseWant(xs, ws, b, n)
			near := func(name string, got []float64, want []float64) {
				GinkgoHelper()
				Expect(got).To(HaveLen(len(want)), name)
				for i := range want {
					Expect(got[i]).To(BeNumerically("~", want[i], 1e-5+1e-5*math.Abs(want[i])), "%s[%d]", name, i)
				}
			}
			in := inputs()
			nat := run(compile(p), "f", in)
			Expect(in["x"].F32).To(Equal(xs), "native left x as it was (y = x is a copy)")
			Expect(in["w"].F32).To(Equal(ws))
			in = inputs()
			fb, err := fallbackRun(p, "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(in["x"].F32).To(Equal(xs), "the fallback left x as it was")
			in = inputs()
			or, err := oracle.Run(context.Background(), f.Funcs[0], in)
			Expect(err).NotTo(HaveOccurred())
			Expect(in["x"].F32).To(Equal(xs), "the oracle left x as it was")
			for _, name := range []string{"y", "s", "z"} {
				want := map[string][]float64{"y": wy, "s": wsum, "z": wz}[name]
				near("oracle "+name, or[name].F64, want)
				near("native "+name, nat[name].Float64s(), want)
				near("fallback "+name, fb[name].Float64s(), want)
				Expect(nat[name].F32).To(Equal(fb[name].F32), "native and fallback agree bit for bit on %s", name)
			}
		},
		Entry("batch 1, no iteration", 1, 0),
		Entry("batch 3, three iterations", 3, 3),
		Entry("batch 70, five iterations", 70, 5),
	)
})

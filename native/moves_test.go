//go:build cgo

package native_test

import (
	"context"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// The values below are closed forms of the loops in testdata/moves.rx,
// worked out by hand; inputs are small integers, so float32 is exact.
var _ = Describe("moves and the pooled arena", Label("native"), Ordered, func() {
	var irp *ir.Program
	var prog *native.Program

	BeforeAll(func() {
		_, irp = parse("moves.rx", readTestdata("moves.rx"))
		prog = compile(irp)
	})

	ramp := func(n int) *tensor.Tensor {
		t := tensor.NewFloat32(n)
		for i := range t.F32 {
			t.F32[i] = float32(i%1000 - 500)
		}
		return t
	}

	It("moves out of temporaries and copies out of variables", func() {
		s := string(prog.Source())
		Expect(s).To(ContainSubstring("RX_TRY(rx_move(&rx_c, x, rx_t9));"))
		Expect(s).To(ContainSubstring("RX_TRY(rx_move(&rx_c, y, rx_t11));"))
		Expect(s).To(ContainSubstring("RX_TRY(rx_copy(&rx_c, z, x));"))
		Expect(s).To(ContainSubstring("RX_TRY(rx_copy(&rx_c, x, a));"))
	})

	// x, y, z after k rounds of (z, x, y) = (x, y+1, 3z), from (a, 2a, -a).
	want := func(k int, a float32) (x, y, z float32) {
		x, y, z = a, 2*a, -a
		for range k {
			z, x, y = x, y+1, 3*x
		}
		return
	}

	DescribeTable("keeps every variable's value apart when a loop rotates them, across batch sizes",
		func(sizes ...int) {
			for _, n := range sizes {
				for _, k := range []int{0, 1, 2, 3} {
					a := ramp(n)
					out := run(prog, "rotate", map[string]*tensor.Tensor{"a": a, "k": tensor.Scalar(int64(k))})
					for i, v := range a.F32 {
						x, y, z := want(k, v)
						if out["x"].F32[i] != x || out["y"].F32[i] != y || out["z"].F32[i] != z {
							Fail("mismatch")
						}
					}
					// The closed forms of the first element, written out.
					switch k {
					case 2:
						Expect(out["x"].F32[0]).To(Equal(float32(3*-500 + 1)))
						Expect(out["y"].F32[0]).To(Equal(float32(6*-500 + 3)))
						Expect(out["z"].F32[0]).To(Equal(float32(2*-500 + 1)))
					case 3:
						Expect(out["x"].F32[0]).To(Equal(float32(6*-500 + 4)))
						Expect(out["y"].F32[0]).To(Equal(float32(9*-500 + 3)))
						Expect(out["z"].F32[0]).To(Equal(float32(3*-500 + 1)))
					}
				}
			}
			c := prog.Counters()
			Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
			Expect(c.FactRequeries).To(BeZero())
		},
		Entry("growing", 1, 7, 4096, 70000),
		Entry("shrinking and growing again", 70000, 3, 200000, 5),
	)

	It("never writes a product over the operand it reads", func() {
		// m swaps the two columns: after k rounds a row (p, q) is (p, q)
		// for even k and (q, p) for odd k.
		m := f32(sh(2, 2), 0, 1, 1, 0)
		for _, n := range []int{1, 3, 5000} {
			a := tensor.NewFloat32(n, 2)
			for i := range a.F32 {
				a.F32[i] = float32(i + 1)
			}
			for _, k := range []int{1, 2, 3, 4} {
				out := run(prog, "power", map[string]*tensor.Tensor{"a": a, "m": m, "k": tensor.Scalar(int64(k))})
				x := out["x"].F32
				Expect(x[:2]).To(Equal(map[bool][]float32{true: {2, 1}, false: {1, 2}}[k%2 == 1]), "k=%d n=%d", k, n)
				for r := range n {
					p, q := float32(2*r+1), float32(2*r+2)
					if k%2 == 1 {
						p, q = q, p
					}
					if x[2*r] != p || x[2*r+1] != q {
						Fail("mismatch")
					}
				}
			}
		}
		c := prog.Counters()
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})

	It("fails a call with its arena in use, releases it, and the next call is right", func() {
		before := prog.Counters()
		a := f32(sh(3), 0.5, -1, 2)
		_, err := prog.Run(context.Background(), "fail", map[string]*tensor.Tensor{"a": a, "d": tensor.Scalar(0)})
		Expect(err).To(MatchError(ir.ErrDivisionByZero))
		out := run(prog, "fail", map[string]*tensor.Tensor{"a": a, "d": tensor.Scalar(2)})
		Expect(out["q"].I64).To(Equal([]int64{3}))
		for i, v := range a.F32 {
			Expect(ulp(out["x"].F32[i], float32(2*math.Tanh(float64(v))+1))).To(BeNumerically("<=", 2))
		}
		c := prog.Counters()
		Expect(c.Calls - before.Calls).To(Equal(int64(2)))
		Expect(c.ArenaAllocs - before.ArenaAllocs).To(BeNumerically(">", 0))
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})

	It("serves concurrent calls of different sizes from separate arenas", func() {
		done := make(chan struct{})
		for g := range 4 {
			go func() {
				defer GinkgoRecover()
				defer func() { done <- struct{}{} }()
				n := []int{5, 3000, 70000, 17}[g]
				for range 20 {
					a := ramp(n)
					out := run(prog, "rotate", map[string]*tensor.Tensor{"a": a, "k": tensor.Scalar(3)})
					for i, v := range a.F32 {
						x, y, z := want(3, v)
						if out["x"].F32[i] != x || out["y"].F32[i] != y || out["z"].F32[i] != z {
							Fail("mismatch")
						}
					}
				}
			}()
		}
		for range 4 {
			<-done
		}
		c := prog.Counters()
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})
})

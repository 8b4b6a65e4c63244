package native_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	nrt "github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// The fused MatMul entry points (rx_matmul_bt, rx_matmul_bias,
// rx_matmul_bt_bias) against the same ops unfused and against a float32
// triple loop in Go, bit for bit.

// mmForm is one way of writing a MatMul with an optional Transpose of w
// and an optional bias row.
type mmForm struct {
	name           string
	bt, bias, tanh bool
	fused          bool   // written so that codegen fuses it
	wantEntry      string // the one MatMul call codegen emits
}

var mmForms = []mmForm{
	{"plain", false, false, false, false, "rx_matmul("},
	{"bt", true, false, false, true, "rx_matmul_bt("},
	{"bias", false, true, false, true, "rx_matmul_bias("},
	{"bt_bias", true, true, false, true, "rx_matmul_bt_bias("},
	{"bias_tanh", false, true, true, true, "rx_matmul_bias_tanh("},
	{"bt_bias_tanh", true, true, true, true, "rx_matmul_bt_bias_tanh("},
	{"u_bt", true, false, false, false, "rx_matmul("},
	{"u_bias", false, true, false, false, "rx_matmul("},
	{"u_bt_bias", true, true, false, false, "rx_matmul("},
	{"u_bias_tanh", false, true, true, false, "rx_matmul("},
	{"u_bt_bias_tanh", true, true, true, false, "rx_matmul("},
}

// mmEntries are the MatMul calls codegen may emit.
var mmEntries = []string{"rx_matmul(", "rx_matmul_bt(", "rx_matmul_bias(", "rx_matmul_bt_bias(",
	"rx_matmul_bias_tanh(", "rx_matmul_bt_bias_tanh("}

// mmFunc builds form f: y = MatMul(x, Transpose(w) or w) (+ b), or the
// Tanh of that sum. The
// unfused forms keep their intermediates in named variables, which codegen
// never skips, so they run rx_transpose, rx_matmul and rx_add one by one.
func mmFunc(f mmForm) *ir.Func {
	b := irtest.NewFunc(f.name)
	x := b.Param("x", ir.Float32, "M", "K")
	var w *ir.Value
	if f.bt {
		w = b.Param("w", ir.Float32, "N", "K")
	} else {
		w = b.Param("w", ir.Float32, "K", "N")
	}
	var bias *ir.Value
	if f.bias {
		bias = b.Param("b", ir.Float32, "N")
	}
	y := b.Result("y", ir.Float32, "M", "N")
	kind := ir.Temp
	if !f.fused {
		kind = ir.Var
	}
	rhs := w
	if f.bt {
		rhs = b.Val("t", kind, ir.Float32, "K", "N")
		b.Op(ir.Transpose, rhs, w)
	}
	if !f.bias {
		b.Op(ir.MatMul, y, x, rhs)
		return b.Fn
	}
	m := b.Val("m", kind, ir.Float32, "M", "N")
	b.Op(ir.MatMul, m, x, rhs)
	if !f.tanh {
		b.Op(ir.Add, y, m, bias)
		return b.Fn
	}
	sum := b.Val("s", kind, ir.Float32, "M", "N")
	b.Op(ir.Add, sum, m, bias)
	b.Op(ir.Tanh, y, sum)
	return b.Fn
}

// mmValues draws n float32s: mostly of a moderate range, with zeros of both
// signs, infinities, NaN, subnormals and values whose products overflow
// sprinkled in.
func mmValues(r *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-39, 3e38, -2e38}
	out := make([]float32, n)
	for i := range out {
		if r.IntN(40) == 0 {
			out[i] = special[r.IntN(len(special))]
			continue
		}
		out[i] = float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(9)-4))
	}
	return out
}

// mmReference is the float32 triple loop: each product rounded, added to a
// sum that starts from 0, k in order; then the bias, if any, and Tanh (in
// float64, rounded once), if asked for.
func mmReference(x, w, b []float32, m, k, n int, bt, tanh bool) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			acc := float32(0)
			for p := range k {
				wv := w[p*n+j]
				if bt {
					wv = w[j*k+p]
				}
				prod := float32(x[i*k+p] * wv)
				acc = float32(acc + prod)
			}
			if b != nil {
				acc = float32(acc + b[j])
			}
			if tanh {
				acc = float32(math.Tanh(float64(acc)))
			}
			out[i*n+j] = acc
		}
	}
	return out
}

// sameBits reports whether got and want are the same float32 bits, or both
// NaN (Go's compiler may commute an addition, which can pick the other
// operand's NaN payload). With tanh, got may also lie within a float32 ULP
// of want: Go's math.Tanh is not the runtime's float64 tanh, and the two
// may round to neighbouring float32s (the unfused form pins the bits).
func sameBits(got, want float32, tanh bool) bool {
	if got != got && want != want {
		return true
	}
	if tanh && math.Abs(float64(got)-float64(want)) <= math.Ldexp(math.Abs(float64(want)), -23) {
		return true
	}
	return math.Float32bits(got) == math.Float32bits(want)
}

var _ = Describe("fused MatMul", Label("native"), func() {
	prog := func() *ir.Program {
		p := &ir.Program{File: "mm.rx"}
		for _, f := range mmForms {
			p.Funcs = append(p.Funcs, mmFunc(f))
		}
		return p
	}

	It("is emitted for the fusible forms only, and as one call each", func() {
		src, err := native.Generate(prog())
		Expect(err).NotTo(HaveOccurred())
		for _, fn := range strings.Split(string(src), "\n/* ")[1:] {
			name := fn[:strings.Index(fn, ":")]
			for _, f := range mmForms {
				if f.name != name {
					continue
				}
				for _, entry := range mmEntries {
					want := 0
					if entry == f.wantEntry {
						want = 1
					}
					Expect(strings.Count(fn, entry)).To(Equal(want), "%s in %s", entry, name)
				}
				if f.fused {
					Expect(fn).NotTo(ContainSubstring("rx_transpose("), name)
					Expect(fn).NotTo(ContainSubstring("rx_add("), name)
					Expect(fn).NotTo(ContainSubstring("rx_tanh("), name)
				}
			}
		}
	})

	It("gives the bits of the unfused ops and of a float32 triple loop for every shape around the blocks, on every ISA", func() {
		p := prog()
		ms := []int{0, 1, 2, 3, 5, 7, 8, 9, 12, 17, 64, 65, 131}
		kns := [][2]int{{0, 5}, {1, 1}, {3, 4}, {5, 7}, {8, 8}, {17, 9}, {32, 32}, {32, 8}, {13, 15},
			{31, 16}, {33, 17}, {7, 24}, {64, 64}, {20, 33}, {9, 45}, {2, 70}, {65, 65}, {70, 3}}
		r := rand.New(rand.NewPCG(7, 11))
		best, err := nrt.DetectISA()
		Expect(err).NotTo(HaveOccurred())
		for _, isa := range nrt.ISAs {
			GinkgoT().Setenv(nrt.ISAEnv, isa)
			pr := compile(p)
			for _, m := range ms {
				for _, kn := range kns {
					k, n := kn[0], kn[1]
					x, wt, bias := mmValues(r, m*k), mmValues(r, k*n), mmValues(r, n)
					for _, f := range mmForms {
						in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, m, k), "w": tensor.FromFloat32(wt, k, n)}
						if f.bt {
							in["w"] = tensor.FromFloat32(wt, n, k)
						}
						var b []float32
						if f.bias {
							b = bias
							in["b"] = tensor.FromFloat32(bias, n)
						}
						want := mmReference(x, wt, b, m, k, n, f.bt, f.tanh)
						got := run(pr, f.name, in)["y"]
						Expect(got.Shape).To(Equal([]int{m, n}))
						// The unfused form of the same computation.
						var other []float32
						if u := "u_" + f.name; f.fused {
							other = run(pr, u, in)["y"].F32
						}
						for i := range want {
							where := fmt.Sprintf("%s on %s: [%d,%d] of %dx%dx%d", f.name, isa, i/n, i%n, m, k, n)
							Expect(sameBits(got.F32[i], want[i], f.tanh)).To(BeTrue(), "%s: %g, want %g", where, got.F32[i], want[i])
							if other != nil {
								Expect(math.Float32bits(got.F32[i])).To(Equal(math.Float32bits(other[i])), "%s vs unfused", where)
							}
						}
					}
				}
			}
			pr.Close()
			if isa == best {
				break
			}
		}
	})

	It("validates and counts the intermediates it skips as the unfused ops do", func() {
		pr := compile(prog())
		in := map[string]*tensor.Tensor{
			"x": tensor.FromFloat32(mmValues(rand.New(rand.NewPCG(1, 2)), 6), 2, 3),
			"w": tensor.FromFloat32(mmValues(rand.New(rand.NewPCG(3, 4)), 12), 4, 3),
			"b": tensor.FromFloat32([]float32{1, 2, 3, 4}, 4),
		}
		run(pr, "bt_bias", in)
		fused := pr.Counters()
		run(pr, "u_bt_bias", in)
		both := pr.Counters()
		Expect(fused.ResultValidations).To(Equal(int64(3))) // t, m, y
		Expect(both.ResultValidations - fused.ResultValidations).To(Equal(fused.ResultValidations))
		Expect(fused.FactQueries).To(Equal(fused.BoundaryValidations + fused.ResultValidations))
		Expect(fused.FactRequeries).To(BeZero())
		Expect(fused.ArenaReleases).To(Equal(fused.ArenaAllocs))
	})

	It("runs on the torch runtime as the ops it replaces, with the same counters", Label("torch"), func() {
		p := prog()
		tp := compileTorch(p)
		r := rand.New(rand.NewPCG(5, 6))
		for _, f := range mmForms {
			const m, k, n = 5, 33, 17
			x, wt, bias := make([]float32, m*k), make([]float32, k*n), make([]float32, n)
			for _, s := range [][]float32{x, wt, bias} {
				for i := range s {
					s[i] = float32(r.NormFloat64())
				}
			}
			in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, m, k), "w": tensor.FromFloat32(wt, k, n)}
			if f.bt {
				in["w"] = tensor.FromFloat32(wt, n, k)
			}
			var b []float32
			if f.bias {
				b = bias
				in["b"] = tensor.FromFloat32(bias, n)
			}
			want := mmReference(x, wt, b, m, k, n, f.bt, f.tanh)
			got := runTorch(tp, f.name, in)["y"].F32
			for i := range want {
				Expect(float64(got[i])).To(BeNumerically("~", float64(want[i]), 1e-4), "%s [%d]", f.name, i)
			}
		}
		c := tp.Counters()
		// Per form: the ops it stands for (Transpose, MatMul, Add), each a
		// kernel call and a validated result, fused or not.
		ops := int64(0)
		for _, f := range mmForms {
			ops++
			if f.bt {
				ops++
			}
			if f.bias {
				ops++
			}
			if f.tanh {
				ops++
			}
		}
		Expect(c.ResultValidations).To(Equal(ops))
		Expect(c.KernelCalls).To(Equal(ops))
	})
})

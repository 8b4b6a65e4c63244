//go:build cgo

package native_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
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
// mmInputs returns the inputs of form f for x [m,k], the weights wt (as
// [k,n], or [n,k] for a transposed form) and the bias row, and the bias
// the reference adds (nil for a form without one).
func mmInputs(f mmForm, x, wt, bias []float32, m, k, n int) (map[string]*tensor.Tensor, []float32) {
	in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, m, k), "w": tensor.FromFloat32(wt, k, n)}
	if f.bt {
		in["w"] = tensor.FromFloat32(wt, n, k)
	}
	if !f.bias {
		return in, nil
	}
	in["b"] = tensor.FromFloat32(bias, n)
	return in, bias
}

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
		forEachISA(func(isa string) {
			pr := compileISA(p, isa)
			defer pr.Close()
			for _, m := range ms {
				for _, kn := range kns {
					k, n := kn[0], kn[1]
					x, wt, bias := mmValues(r, m*k), mmValues(r, k*n), mmValues(r, n)
					for _, f := range mmForms {
						in, b := mmInputs(f, x, wt, bias, m, k, n)
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
		})
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
			in, b := mmInputs(f, x, wt, bias, m, k, n)
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

// The fused elementwise pair (rx_ew2) against the same ops unfused and
// float32 arithmetic in Go, bit for bit.

// ewShape is how an operand of a pair broadcasts into [R][N].
type ewShape int

const (
	ewFull   ewShape = iota // [R][N]
	ewRow                   // [N]
	ewScalar                // rank 0
	ewCol                   // [R][1]: not a fast-path shape, run through t
)

func (s ewShape) dims() []any {
	return [][]any{{"R", "N"}, {"N"}, {}, {"R", 1}}[s]
}

func (s ewShape) shape(r, n int) []int {
	return [][]int{{r, n}, {n}, {}, {r, 1}}[s]
}

// at is the element of an operand of shape s that [i][j] reads.
func (s ewShape) at(v []float32, i, j, n int) float32 {
	return v[[]int{i*n + j, j, 0, i}[s]]
}

type ewCase struct {
	op1, op2 ir.OpKind
	b, c     ewShape
}

func (e ewCase) name(fused bool) string {
	u := "u"
	if fused {
		u = "f"
	}
	return fmt.Sprintf("%s_%s_%s_%d_%d", u, e.op1, e.op2, e.b, e.c)
}

// ewFunc builds y = op2(op1(x, b), c); unfused, t is a named variable.
func ewFunc(e ewCase, fused bool) *ir.Func {
	bd := irtest.NewFunc(e.name(fused))
	x := bd.Param("x", ir.Float32, "R", "N")
	b := bd.Param("b", ir.Float32, e.b.dims()...)
	c := bd.Param("c", ir.Float32, e.c.dims()...)
	y := bd.Result("y", ir.Float32, "R", "N")
	t := bd.Temp(ir.Float32, "R", "N")
	if !fused {
		t = bd.Val("t", ir.Var, ir.Float32, "R", "N")
	}
	bd.Op(e.op1, t, x, b)
	bd.Op(e.op2, y, t, c)
	return bd.Fn
}

func ewApply(k ir.OpKind, a, b float32) float32 {
	switch k {
	case ir.Add:
		return float32(a + b)
	case ir.Sub:
		return float32(a - b)
	case ir.Mul:
		return float32(a * b)
	}
	return float32(a / b)
}

var _ = Describe("fused elementwise pairs", Label("native"), func() {
	var cases []ewCase
	kinds := []ir.OpKind{ir.Add, ir.Sub, ir.Mul, ir.Div}
	for _, o1 := range kinds {
		for _, o2 := range kinds {
			cases = append(cases, ewCase{o1, o2, ewRow, ewFull})
		}
	}
	for _, bc := range [][2]ewShape{{ewFull, ewRow}, {ewScalar, ewRow}, {ewRow, ewScalar}, {ewFull, ewFull},
		{ewScalar, ewScalar}, {ewCol, ewRow}, {ewRow, ewCol}} {
		cases = append(cases, ewCase{ir.Sub, ir.Div, bc[0], bc[1]})
	}
	prog := func() *ir.Program {
		p := &ir.Program{File: "ew.rx"}
		for _, e := range cases {
			p.Funcs = append(p.Funcs, ewFunc(e, true), ewFunc(e, false))
		}
		return p
	}

	It("is emitted for a temporary read once between ops of one shape", func() {
		src, err := native.Generate(prog())
		Expect(err).NotTo(HaveOccurred())
		s := string(src)
		Expect(strings.Count(s, "rx_ew2(")).To(Equal(len(cases)))
		Expect(s).To(ContainSubstring("rx_ew2(&rx_c, y, x, b, RX_EW_SUB, c, RX_EW_DIV, rx_t4));"))
	})

	It("gives the bits of the ops one by one and of float32 arithmetic, around the tiles and vector widths", func() {
		pr := compile(prog())
		r := rand.New(rand.NewPCG(9, 10))
		for _, rows := range []int{0, 1, 3, 70} {
			for _, n := range []int{1, 3, 8, 17, 33, 1025} {
				for _, e := range cases {
					x, b, c := mmValues(r, rows*n), mmValues(r, max(rows, 1)*n), mmValues(r, max(rows, 1)*n)
					in := map[string]*tensor.Tensor{
						"x": tensor.FromFloat32(x, rows, n),
						"b": tensor.FromFloat32(b[:countOf(e.b.shape(rows, n))], e.b.shape(rows, n)...),
						"c": tensor.FromFloat32(c[:countOf(e.c.shape(rows, n))], e.c.shape(rows, n)...),
					}
					got := run(pr, e.name(true), in)["y"].F32
					other := run(pr, e.name(false), in)["y"].F32
					Expect(got).To(HaveLen(rows * n))
					for i := range rows {
						for j := range n {
							want := ewApply(e.op2, ewApply(e.op1, x[i*n+j], e.b.at(b, i, j, n)), e.c.at(c, i, j, n))
							k := i*n + j
							where := fmt.Sprintf("%s [%d,%d] of %dx%d", e.name(true), i, j, rows, n)
							Expect(sameBits(got[k], want, false)).To(BeTrue(), "%s: %g, want %g", where, got[k], want)
							Expect(math.Float32bits(got[k])).To(Equal(math.Float32bits(other[k])), "%s vs unfused", where)
						}
					}
				}
			}
		}
		c := pr.Counters()
		Expect(c.FactQueries).To(Equal(c.BoundaryValidations + c.ResultValidations))
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})

	It("runs on the torch runtime as its two ops", Label("torch"), func() {
		tp := compileTorch(prog())
		const rows, n = 5, 19
		r := rand.New(rand.NewPCG(3, 3))
		for _, e := range cases {
			x, b, c := make([]float32, rows*n), make([]float32, rows*n), make([]float32, rows*n)
			for _, v := range [][]float32{x, b, c} {
				for i := range v {
					v[i] = float32(r.NormFloat64()) + 3 // no division by zero
				}
			}
			in := map[string]*tensor.Tensor{
				"x": tensor.FromFloat32(x, rows, n),
				"b": tensor.FromFloat32(b[:countOf(e.b.shape(rows, n))], e.b.shape(rows, n)...),
				"c": tensor.FromFloat32(c[:countOf(e.c.shape(rows, n))], e.c.shape(rows, n)...),
			}
			got := runTorch(tp, e.name(true), in)["y"].F32
			for i := range rows {
				for j := range n {
					want := ewApply(e.op2, ewApply(e.op1, x[i*n+j], e.b.at(b, i, j, n)), e.c.at(c, i, j, n))
					Expect(float64(got[i*n+j])).To(BeNumerically("~", float64(want), 1e-5*math.Abs(float64(want))+1e-6), e.name(true))
				}
			}
		}
		Expect(tp.Counters().KernelCalls).To(Equal(int64(2 * len(cases))))
	})

	It("reads the divisor before it overwrites it when the result is that operand", func() {
		bd := irtest.NewFunc("alias")
		x := bd.Param("x", ir.Float32, "R", "N")
		b := bd.Param("b", ir.Float32, "N")
		y := bd.Result("y", ir.Float32, "R", "N")
		t := bd.Temp(ir.Float32, "R", "N")
		bd.Op(ir.Add, y, x, x)
		bd.Op(ir.Sub, t, x, b)
		bd.Op(ir.Div, y, t, y) // y = (x - b) / (x + x)
		p := &ir.Program{File: "alias.rx", Funcs: []*ir.Func{bd.Fn}}
		src, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(src)).To(ContainSubstring("rx_ew2(&rx_c, y, x, b, RX_EW_SUB, y, RX_EW_DIV, "))
		pr := compile(p)
		const rows, n = 40, 50
		xs, bs := mmValues(rand.New(rand.NewPCG(1, 1)), rows*n), mmValues(rand.New(rand.NewPCG(2, 2)), n)
		got := run(pr, "alias", map[string]*tensor.Tensor{"x": tensor.FromFloat32(xs, rows, n), "b": tensor.FromFloat32(bs, n)})["y"].F32
		for k := range got {
			want := float32(float32(xs[k]-bs[k%n]) / float32(xs[k]+xs[k]))
			Expect(sameBits(got[k], want, false)).To(BeTrue(), "[%d]: %g, want %g", k, got[k], want)
		}
	})
})

func countOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

var _ = Describe("fused constant operands", Label("native"), func() {
	consts := []float64{0.75, -0.5, 0, math.Copysign(0, -1), 3e38, 1e-40}
	kinds := []ir.OpKind{ir.Add, ir.Sub, ir.Mul, ir.Div}
	name := func(k ir.OpKind, c int, fused bool) string {
		return fmt.Sprintf("%s_%d_%v", k, c, fused)
	}
	prog := func() *ir.Program {
		p := &ir.Program{File: "k.rx"}
		for _, k := range kinds {
			for ci, cv := range consts {
				for _, fused := range []bool{true, false} {
					bd := irtest.NewFunc(name(k, ci, fused))
					x := bd.Param("x", ir.Float32, "R", "N")
					y := bd.Result("y", ir.Float32, "R", "N")
					t := bd.Temp(ir.Float32)
					if !fused {
						t = bd.Val("t", ir.Var, ir.Float32)
					}
					bd.Op(ir.ConstF, t).F = cv
					bd.Op(k, y, x, t)
					p.Funcs = append(p.Funcs, bd.Fn)
				}
			}
		}
		return p
	}

	It("runs x op k as one call with the bits of rx_const_f and the op", func() {
		p := prog()
		src, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(src), "rx_ew_const(")).To(Equal(len(kinds) * len(consts)))
		Expect(string(src)).To(ContainSubstring("rx_ew_const(&rx_c, y, x, RX_EW_MUL, 0.75f, rx_t2));"))
		pr := compile(p)
		r := rand.New(rand.NewPCG(4, 4))
		for _, shape := range [][2]int{{0, 3}, {1, 1}, {3, 17}, {40, 33}} {
			x := mmValues(r, shape[0]*shape[1])
			in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, shape[0], shape[1])}
			for _, k := range kinds {
				for ci, cv := range consts {
					got := run(pr, name(k, ci, true), in)["y"].F32
					other := run(pr, name(k, ci, false), in)["y"].F32
					for i := range x {
						want := ewApply(k, x[i], float32(cv))
						Expect(sameBits(got[i], want, false)).To(BeTrue(), "%s [%d]: %g, want %g", name(k, ci, true), i, got[i], want)
						Expect(math.Float32bits(got[i])).To(Equal(math.Float32bits(other[i])), "%s [%d] vs unfused", name(k, ci, true), i)
					}
				}
			}
		}
		c := pr.Counters()
		Expect(c.FactQueries).To(Equal(c.BoundaryValidations + c.ResultValidations))
		Expect(c.ResultValidations).To(Equal(2 * c.Calls)) // the constant and the op, fused or not
	})

	It("runs on the torch runtime as the constant and the op", Label("torch"), func() {
		tp := compileTorch(prog())
		x := []float32{1, -2, 3.5, 0.25}
		in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(x, 2, 2)}
		for _, k := range kinds {
			got := runTorch(tp, name(k, 0, true), in)["y"].F32
			for i := range x {
				Expect(got[i]).To(Equal(ewApply(k, x[i], 0.75)))
			}
		}
		Expect(tp.Counters().KernelCalls).To(Equal(int64(len(kinds))))
	})
})

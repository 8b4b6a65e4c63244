package native_test

import (
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	nrt "github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// Kernels whose fast paths split a tensor into vector-sized blocks and
// edges: every shape around the block sizes gives the element-by-element
// result.
var _ = Describe("blocked kernels", Label("native"), func() {
	It("transposes every shape around the 8x8 and 4x4 blocks on every ISA", func() {
		b := irtest.NewFunc("tr")
		x := b.Param("x", ir.Float32, "M", "N")
		y := b.Result("y", ir.Float32, "N", "M")
		b.Op(ir.Transpose, y, x)
		forEachISA(func(isa string) {
			prog := compileISA(&ir.Program{File: "tr.rx", Funcs: []*ir.Func{b.Fn}}, isa)
			defer prog.Close()
			checkTranspose(prog)
		})
	})

	It("computes broadcasting arithmetic on rows around the vector widths on every ISA", func() {
		p := &ir.Program{File: "bin.rx"}
		for i, op := range arithOps {
			b := irtest.NewFunc(fmt.Sprintf("f%d", i))
			x := b.Param("x", ir.Float32, "R", "N")
			z := b.Param("z", ir.Float32, "N")
			s := b.Param("s", ir.Float32, "R", "N")
			y := b.Result("y", ir.Float32, "R", "N")
			t := b.Temp(ir.Float32, "R", "N")
			b.Op(op.kind, t, x, z) // a row vector broadcast over the rows
			b.Op(op.kind, y, t, s) // full shapes
			p.Funcs = append(p.Funcs, b.Fn)
		}
		forEachISA(func(isa string) {
			prog := compileISA(p, isa)
			defer prog.Close()
			checkArith(prog, isa)
		})
	})

	It("computes Neg, Abs and Relu bit for bit around the vector widths on every ISA", func() {
		p := &ir.Program{File: "exact.rx"}
		for _, k := range exactOps {
			b := irtest.NewFunc(k.name)
			x := b.Param("x", ir.Float32, "N")
			y := b.Result("y", ir.Float32, "N")
			b.Op(k.kind, y, x)
			p.Funcs = append(p.Funcs, b.Fn)
		}
		forEachISA(func(isa string) {
			prog := compileISA(p, isa)
			defer prog.Close()
			checkExact(prog, isa)
		})
	})

	It("broadcasts a left operand whose dims are the right one's last ones", func() {
		p := &ir.Program{File: "left.rx"}
		for i, op := range arithOps {
			b := irtest.NewFunc(fmt.Sprintf("f%d", i))
			z := b.Param("z", ir.Float32, "N")
			x := b.Param("x", ir.Float32, "R", "N")
			k := b.Param("k", ir.Float32)
			y := b.Result("y", ir.Float32, "R", "N")
			t := b.Temp(ir.Float32, "R", "N")
			b.Op(op.kind, t, z, x) // a row vector on the left, over the rows
			b.Op(op.kind, y, k, t) // a scalar on the left
			p.Funcs = append(p.Funcs, b.Fn)
		}
		prog := compile(p)
		for i, op := range arithOps {
			for _, n := range []int{1, 3, 8, 17, 33} {
				for _, rows := range []int{1, 2, 5} {
					z, x := make([]float32, n), make([]float32, rows*n)
					for j := range z {
						z[j] = 1.5 - float32(j)*0.11
					}
					for j := range x {
						x[j] = float32(j%7) + 0.25
					}
					out := run(prog, fmt.Sprintf("f%d", i), map[string]*tensor.Tensor{
						"z": tensor.FromFloat32(z, n), "x": tensor.FromFloat32(x, rows, n), "k": tensor.FromFloat32([]float32{-2.5})})["y"]
					for j := range x {
						Expect(out.F32[j]).To(Equal(op.f(-2.5, op.f(z[j%n], x[j]))), "op %d, %dx%d, element %d", i, rows, n, j)
					}
				}
			}
		}
	})

	It("broadcasts rank-3 operands block by block", func() {
		b := irtest.NewFunc("f")
		x := b.Param("x", ir.Float32, "P", "R", "N")
		z := b.Param("z", ir.Float32, "R", "N")
		c := b.Param("c", ir.Float32, "P", 1, 1)
		y := b.Result("y", ir.Float32, "P", "R", "N")
		t := b.Temp(ir.Float32, "P", "R", "N")
		b.Op(ir.Sub, t, x, z) // z repeated for each p
		b.Op(ir.Div, y, t, c) // one value per p
		prog := compile(&ir.Program{File: "b3.rx", Funcs: []*ir.Func{b.Fn}})
		defer prog.Close()
		for _, n := range []int{1, 5, 8, 16, 21} {
			const p, r = 2, 3
			x, z, c := make([]float32, p*r*n), make([]float32, r*n), []float32{3, -0.7}
			for k := range x {
				x[k] = float32(k)*1.3 - 4
			}
			for k := range z {
				z[k] = float32(k) * 0.29
			}
			out := run(prog, "f", map[string]*tensor.Tensor{
				"x": tensor.FromFloat32(x, p, r, n), "z": tensor.FromFloat32(z, r, n), "c": tensor.FromFloat32(c, p, 1, 1)})["y"]
			for k := range x {
				want := (x[k] - z[k%(r*n)]) / c[k/(r*n)]
				Expect(out.F32[k]).To(Equal(want), fmt.Sprintf("n=%d, element %d", n, k))
			}
		}
	})
})

// checkTranspose runs prog's tr on every shape from sizes x sizes around
// the block sizes and compares each element with its source.
func checkTranspose(prog *native.Program) {
	sizes := []int{1, 3, 4, 5, 8, 9, 13, 16, 32}
	for _, m := range sizes {
		for _, n := range sizes {
			data := make([]float32, m*n)
			for i := range data {
				data[i] = float32(i) + 0.25
			}
			out := run(prog, "tr", map[string]*tensor.Tensor{"x": tensor.FromFloat32(data, m, n)})["y"]
			Expect(out.Shape).To(Equal([]int{n, m}))
			for i := range m {
				for j := range n {
					Expect(out.F32[j*m+i]).To(Equal(data[i*n+j]), fmt.Sprintf("[%d,%d] of %dx%d", i, j, m, n))
				}
			}
		}
	}
}

// arithOps are the binary ops of the broadcasting spec and their float32
// arithmetic in Go.
var arithOps = []struct {
	kind ir.OpKind
	f    func(a, b float32) float32
}{
	{ir.Add, func(a, b float32) float32 { return a + b }},
	{ir.Sub, func(a, b float32) float32 { return a - b }},
	{ir.Mul, func(a, b float32) float32 { return a * b }},
	{ir.Div, func(a, b float32) float32 { return a / b }},
}

// checkArith runs f0..f3 (t = x op z, y = t op s for each of arithOps) on
// rows of every length around the vector widths.
func checkArith(prog *native.Program, isa string) {
	for i, op := range arithOps {
		for _, n := range []int{1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33} {
			const rows = 3
			x, z, s := make([]float32, rows*n), make([]float32, n), make([]float32, rows*n)
			for k := range x {
				x[k], s[k] = float32(k)*0.37-5, float32(k%5)+0.5
			}
			for k := range z {
				z[k] = 1.5 - float32(k)*0.11
			}
			out := run(prog, fmt.Sprintf("f%d", i), map[string]*tensor.Tensor{
				"x": tensor.FromFloat32(x, rows, n), "z": tensor.FromFloat32(z, n), "s": tensor.FromFloat32(s, rows, n)})["y"]
			for k := range x {
				Expect(out.F32[k]).To(Equal(op.f(op.f(x[k], z[k%n]), s[k])), fmt.Sprintf("%s: op %d, n=%d, element %d", isa, i, n, k))
			}
		}
	}
}

// exactOps are the unary ops that are bitwise operations on a float's
// bits, with their definitions on bits (the fallback's: Relu keeps a NaN's
// bits and gives +0 for every other value that is not positive).
var exactOps = []struct {
	name string
	kind ir.OpKind
	f    func(bits uint32) uint32
}{
	{"neg", ir.Neg, func(u uint32) uint32 { return u ^ 1<<31 }},
	{"abs", ir.Abs, func(u uint32) uint32 { return u &^ (1 << 31) }},
	{"relu", ir.Relu, func(u uint32) uint32 {
		if x := math.Float32frombits(u); x > 0 || x != x {
			return u
		}
		return 0
	}},
}

// checkExact runs prog's exact maps on every length around the vector
// widths (and their unrolled pairs), the special values (NaNs of either
// sign and several payloads, zeros, infinities, subnormals) at every
// position, and compares the bits.
func checkExact(prog *native.Program, isa string) {
	special := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x80000000, 0, 0x7f800000, 0xff800000,
		1, 0x80000001, 0x3f800000, 0xbf800000, 0x00800000, 0x80800000}
	for _, n := range []int{1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65} {
		data := make([]float32, n)
		for i := range data {
			data[i] = math.Float32frombits(special[i%len(special)])
		}
		for _, k := range exactOps {
			out := run(prog, k.name, map[string]*tensor.Tensor{"x": tensor.FromFloat32(data, n)})["y"]
			for i, v := range data {
				Expect(math.Float32bits(out.F32[i])).To(Equal(k.f(math.Float32bits(v))), "%s: %s, n=%d, element %d (%#08x)", isa, k.name, n, i, math.Float32bits(v))
			}
		}
	}
}

// forEachISA runs f once per kernel ISA this CPU supports, from the
// plainest to the best; f compiles with native.Options.ISA set to it
// (compileISA).
func forEachISA(f func(isa string)) {
	GinkgoHelper()
	best, err := nrt.DetectISA("")
	Expect(err).NotTo(HaveOccurred())
	for _, isa := range nrt.ISAs {
		f(isa)
		if isa == best {
			return
		}
	}
}

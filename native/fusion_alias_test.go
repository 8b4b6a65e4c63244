//go:build cgo

package native_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// The fused entry points with a destination that is also their left
// operand, which the IR allows for a Var or Result (.rx lowering always
// writes a fresh Temp first): the fused form (the intermediate a Temp, so
// the generator fuses) and the unfused one (the intermediate a Var) must
// give the same bits.
var _ = Describe("fused ops whose destination is their left operand", Label("native"), func() {
	kind := func(fused bool) ir.ValueKind {
		if fused {
			return ir.Temp
		}
		return ir.Var
	}
	suffix := func(fused bool) string {
		if fused {
			return "_fused"
		}
		return "_unfused"
	}
	// h = x; h = MatMul(h, w) + b: rx_matmul_bias(h, h, w, b, m).
	bias := func(fused bool) *ir.Func {
		bd := irtest.NewFunc("bias" + suffix(fused))
		x := bd.Param("x", ir.Float32, "R", 4)
		w := bd.Param("w", ir.Float32, 4, 4)
		b := bd.Param("b", ir.Float32, 4)
		h := bd.Result("h", ir.Float32, "R", 4)
		bd.Op(ir.Copy, h, x)
		m := bd.Val("m", kind(fused), ir.Float32, "R", 4)
		bd.Op(ir.MatMul, m, h, w)
		bd.Op(ir.Add, h, m, b)
		return bd.Fn
	}
	// h = x; h = MatMul(h, Transpose(w)): rx_matmul_bt(h, h, w, t).
	bt := func(fused bool) *ir.Func {
		bd := irtest.NewFunc("bt" + suffix(fused))
		x := bd.Param("x", ir.Float32, "R", 4)
		w := bd.Param("w", ir.Float32, 4, 4)
		h := bd.Result("h", ir.Float32, "R", 4)
		bd.Op(ir.Copy, h, x)
		t := bd.Val("t", kind(fused), ir.Float32, 4, 4)
		bd.Op(ir.Transpose, t, w)
		bd.Op(ir.MatMul, h, h, t)
		return bd.Fn
	}
	// h = x; h = MatMul(h, w) (h's value now in an arena buffer); h = h *
	// 0.5: rx_ew_const(h, h, RX_EW_MUL, 0.5f, t).
	scaled := func(fused bool) *ir.Func {
		bd := irtest.NewFunc("const" + suffix(fused))
		x := bd.Param("x", ir.Float32, "R", 4)
		w := bd.Param("w", ir.Float32, 4, 4)
		h := bd.Result("h", ir.Float32, "R", 4)
		bd.Op(ir.Copy, h, x)
		bd.Op(ir.MatMul, h, h, w)
		t := bd.Val("t", kind(fused), ir.Float32)
		bd.Op(ir.ConstF, t).F = 0.5
		bd.Op(ir.Mul, h, h, t)
		return bd.Fn
	}

	It("computes what the ops one by one compute, call after call", func() {
		var fns []*ir.Func
		for _, mk := range []func(bool) *ir.Func{bias, bt, scaled} {
			fns = append(fns, mk(true), mk(false))
		}
		p := &ir.Program{File: "alias.rx", Funcs: fns}
		gen, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		src := string(gen)
		Expect(src).To(ContainSubstring("rx_matmul_bias(&rx_c, h, h, w, b, m)"))
		Expect(src).To(ContainSubstring("rx_matmul_bt(&rx_c, h, h, w, t)"))
		Expect(src).To(ContainSubstring("rx_ew_const(&rx_c, h, h, RX_EW_MUL, 0.5f, t)"))
		pr := compile(p)
		ws := make([]float32, 16)
		for i := range ws {
			ws[i] = float32(i%5) - 1.5
		}
		for _, name := range []string{"bias", "bt", "const"} {
			in := map[string]*tensor.Tensor{
				"x": tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4),
				"w": tensor.FromFloat32(ws, 4, 4),
			}
			if name == "bias" {
				in["b"] = tensor.FromFloat32([]float32{0.25, 0.5, 1, 2}, 4)
			}
			fb, err := fallbackRun(p, name+"_unfused", in)
			Expect(err).NotTo(HaveOccurred())
			want := fb["h"].F32
			// Twice: the second call finds the first one's buffers.
			for range 2 {
				for _, fn := range []string{name + "_fused", name + "_unfused"} {
					got := run(pr, fn, in)["h"].F32
					Expect(got).To(HaveLen(len(want)))
					for i := range want {
						Expect(math.Float32bits(got[i])).To(Equal(math.Float32bits(want[i])), "%s h[%d]: %v, want %v", fn, i, got, want)
					}
				}
			}
		}
	})
})

package oracle_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("shapes whose element count overflows", func() {
	It("refuses an input whose shape overflows, whatever its (wrapped) data length", func() {
		b := newFunc("f")
		x := b.param("x", f32("B", "C"))
		y := b.result("y", f32("B", "C"))
		fn := b.body(assign(y, call(program.Tanh, ref(x))), ret())
		_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(1<<32, 1<<32))})
		Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
		Expect(err).To(MatchError("f: input x: invalid tensor: shape [4294967296 4294967296] has more than 1152921504606846975 elements (2^60 - 1), the most a tensor may hold"))
	})

	It("fails a MatMul whose result overflows with the stable shape error, before allocating", func() {
		b := newFunc("f")
		x := b.param("x", f32("M", "K"))
		w := b.param("w", f32("K", "N"))
		y := b.result("y", f32("M", "N"))
		mm := call(program.MatMul, ref(x), ref(w)).(*program.Call)
		mm.Typ = f32("M", "N")
		fn := b.body(assign(y, mm), ret())
		_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(1<<32, 0)), "w": t32(sh(0, 1<<32))})
		Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
		Expect(errors.Is(err, oracle.ErrInternal)).To(BeFalse())
		Expect(err).To(MatchError("f: shape [M N] is [4294967296 4294967296] with the inputs' dimensions (K=0, M=4294967296, N=4294967296): about 2^64 elements, more than the 1152921504606846975 (2^60 - 1) a tensor may hold"))
	})

	It("fails a hand-built tree with an overflowing constant shape with the shape error, not a panic", func() {
		b := newFunc("f")
		x := b.param("x", f32(2))
		y := b.result("y", f32(2))
		big := b.local("big", f32(1<<62, 4))
		fn := b.body(define(big, bin(program.Add, ref(x), flit(1))), assign(y, ref(x)), ret())
		_, err := oracle.Run(context.Background(), fn, map[string]*tensor.Tensor{"x": t32(sh(2), 1, 2)})
		Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
		Expect(err).To(MatchError("f: shape [4611686018427387904 4] is [4611686018427387904 4] with the inputs' dimensions (none): about 2^64 elements, more than the 1152921504606846975 (2^60 - 1) a tensor may hold"))
	})
})

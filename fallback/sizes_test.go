package fallback_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// matMulOverflow is the stable error of MatMul of [M][0] by [0][N] with M
// and N 2^32: empty inputs, a result of 2^64 elements.
const matMulOverflow = "f: shape [M N] is [4294967296 4294967296] with the inputs' dimensions (K=0, M=4294967296, N=4294967296): about 2^64 elements, more than the 1152921504606846975 (2^60 - 1) a tensor may hold"

var _ = Describe("shapes whose element count overflows", func() {
	It("refuses an input whose shape overflows, whatever its (wrapped) data length", func() {
		// 2^32 × 2^32 wraps to 0: an empty slice matches a naive count.
		_, err := run(unaryFn(ir.Tanh, 4), inputs{"x": tensor.FromFloat32(nil, 1<<32, 1<<32)})
		Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
		Expect(err).To(MatchError("f: input x: invalid tensor: shape [4294967296 4294967296] has more than 1152921504606846975 elements (2^60 - 1), the most a tensor may hold"))
	})

	It("fails a MatMul whose result overflows with the stable shape error, before allocating", func() {
		b := irtest.NewFunc("f")
		x := b.Param("x", ir.Float32, "M", "K")
		w := b.Param("w", ir.Float32, "K", "N")
		y := b.Result("y", ir.Float32, "M", "N")
		b.Op(ir.MatMul, y, x, w)
		_, err := run(b.Fn, inputs{"x": f32(nil, 1<<32, 0), "w": f32(nil, 0, 1<<32)})
		Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
		Expect(errors.Is(err, fallback.ErrInternal)).To(BeFalse())
		Expect(err).To(MatchError(matMulOverflow))
	})

	It("fails hand-built IR with an overflowing constant shape with the shape error, not a panic", func() {
		b := irtest.NewFunc("f")
		x := b.Param("x", ir.Float32, 2)
		t := b.Temp(ir.Float32, 1<<62, 4)
		y := b.Result("y", ir.Float32, 2)
		b.Op(ir.Tanh, t, x)
		b.Op(ir.Copy, y, x)
		_, err := run(b.Fn, inputs{"x": f32([]float32{1, 2}, 2)})
		Expect(errors.Is(err, ir.ErrShape)).To(BeTrue())
		Expect(err).To(MatchError("f: shape [4611686018427387904 4] is [4611686018427387904 4] with the inputs' dimensions (none): about 2^64 elements, more than the 1152921504606846975 (2^60 - 1) a tensor may hold"))
	})

	It("fails exactly as the oracle does on a checked program run at a larger size than it was checked for", func() {
		f, err := program.Parse("t.rx", []byte("package p\nfunc f(x [M][K]float32, w [K][N]float32) (y [M][N]float32) { y = MatMul(x, w); return }\n"))
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		in := func() map[string]*tensor.Tensor {
			return inputs{"x": f32(nil, 1<<32, 0), "w": f32(nil, 0, 1<<32)}
		}
		_, ferr := fallback.Run(context.Background(), p.Func("f"), in())
		_, oerr := oracle.Run(context.Background(), f.Func("f"), in())
		Expect(ferr).To(MatchError(matMulOverflow))
		Expect(oerr).To(MatchError(matMulOverflow))
		Expect(errors.Is(oerr, ir.ErrShape)).To(BeTrue())
	})
})

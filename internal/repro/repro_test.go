package repro_test

import (
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/repro"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

var errBase = errors.New("test export")

func program() *ir.Program {
	b := irtest.NewFunc("f")
	b.Param("x", ir.Float32, "B", 2)
	b.Param("n", ir.Int64)
	b.Result("y", ir.Float32, "B", 2)
	return &ir.Program{File: "p.rx", Funcs: []*ir.Func{b.Fn}}
}

var _ = Describe("Prepare and Inputs", func() {
	It("fill in the default tolerance and source, and keep given ones", func() {
		f, opts, err := repro.Prepare(program(), repro.Options{Func: "f"}, errBase)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Name).To(Equal("f"))
		Expect([]float64{opts.RTol, opts.ATol}).To(Equal([]float64{1e-4, 3e-6}))
		Expect(opts.Source).To(Equal("p.rx"))
		_, opts, err = repro.Prepare(program(), repro.Options{Func: "f", ATol: 1, Source: "s.rx"}, errBase)
		Expect(err).NotTo(HaveOccurred())
		Expect([]float64{opts.RTol, opts.ATol}).To(Equal([]float64{0, 1}))
		Expect(opts.Source).To(Equal("s.rx"))
	})

	It("refuse a missing function and a missing input with errors wrapping errBase", func() {
		_, _, err := repro.Prepare(program(), repro.Options{Func: "g"}, errBase)
		Expect(err).To(MatchError(errBase))
		Expect(err.Error()).To(Equal(`test export: p.rx has no function "g"`))
		p := program()
		x := &tensor.Tensor{DType: tensor.Float32, Shape: []int{1, 2}, F32: []float32{1, 2}}
		_, err = repro.Inputs(p.Funcs[0], repro.Options{Func: "f", Inputs: map[string]*tensor.Tensor{"x": x}}, errBase)
		Expect(err).To(MatchError(errBase))
		Expect(err.Error()).To(Equal("test export: repro of f: no input n"))
		n := &tensor.Tensor{DType: tensor.Int64, Shape: []int{}, I64: []int64{3}}
		in, err := repro.Inputs(p.Funcs[0], repro.Options{Func: "f", Inputs: map[string]*tensor.Tensor{"n": n, "x": x}}, errBase)
		Expect(err).NotTo(HaveOccurred())
		Expect(in).To(Equal([]*tensor.Tensor{x, n}))
	})
})

var _ = Describe("the header", func() {
	It("names version, function, source and executor, through the language's comment text", func() {
		opts := repro.Options{Executor: "numpy", Func: "f", Source: "a.rx", Version: "v1"}
		Expect(repro.Byline(opts, func(s string) string { return "<" + s + ">" })).
			To(Equal("Reproducer written by rxeq <v1>: <f> from <a.rx>, run by numpy"))
	})

	It("strips a module's leading comment lines and the blank lines after them", func() {
		Expect(repro.StripHeader("# a\n# b\n\n\nimport x\n# c\n", "#")).To(Equal("import x\n# c\n"))
		Expect(repro.StripHeader("// a\n'use strict';\n", "//")).To(Equal("'use strict';\n"))
	})
})

var _ = Describe("LittleEndian and Dims", func() {
	It("write float32 bits and int64 values little-endian, and the shape in decimal", func() {
		f := &tensor.Tensor{DType: tensor.Float32, Shape: []int{1, 2}, F32: []float32{1, float32(math.Copysign(0, -1))}}
		Expect(repro.LittleEndian(f)).To(Equal([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x80}))
		Expect(repro.Dims(f)).To(Equal([]string{"1", "2"}))
		i := &tensor.Tensor{DType: tensor.Int64, Shape: []int{1}, I64: []int64{-2}}
		Expect(repro.LittleEndian(i)).To(Equal([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
		Expect(repro.LittleEndian(&tensor.Tensor{DType: tensor.Float32, Shape: []int{0}})).To(BeEmpty())
	})
})

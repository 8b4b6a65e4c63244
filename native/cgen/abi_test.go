package cgen_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native/cgen"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
)

var _ = Describe("Translate", func() {
	It("gives Generate's source and every function's ABI", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		src, err := cgen.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		u := cgen.Translate(p)
		Expect(u.Source).To(Equal(src))
		Expect(u.Unsupported).To(BeEmpty())
		Expect(u.Funcs).To(HaveLen(1))
		abi := u.Funcs["score_linear"]
		Expect(abi.Func).To(BeIdenticalTo(p.Func("score_linear")))
		Expect(abi.CName).To(Equal(cgen.CFuncName("score_linear")))
		Expect(abi.Syms).To(Equal([]string{"B"}))
		// x [B][32], w [32][8], b [8]; logits and probs [B][8], classes [B].
		Expect(abi.ParamDims).To(Equal([][]int{{-1, 32}, {32, 8}, {8}}))
		Expect(abi.OutDims).To(Equal([][]int{{-1, 8}, {-1, 8}, {-1}}))
		Expect(abi.OutRanks).To(Equal(5))
		Expect(abi.Params).To(HaveLen(3))
		Expect(abi.Results).To(HaveLen(3))
		Expect(abi.Sites).To(HaveLen(1)) // the CheckedRem of the loop
		for _, v := range append(append([]*ir.Value(nil), abi.Func.Params...), abi.Results...) {
			Expect(abi.SlotOf).To(HaveKey(v))
		}
	})

	It("leaves unsupported functions out and lists them in program order", func() {
		ok := irtest.NewFunc("fine")
		x := ok.Param("x", ir.Float32, 2)
		r := ok.Result("r", ir.Float32, 2)
		ok.Op(ir.Tanh, r, x)
		bad := irtest.NewFunc("flag")
		bad.Param("c", ir.Bool)
		p := &ir.Program{File: "t.rx", Funcs: []*ir.Func{bad.Fn, ok.Fn}}
		u := cgen.Translate(p)
		Expect(u.Funcs).To(HaveKey("fine"))
		Expect(u.Funcs).NotTo(HaveKey("flag"))
		Expect(u.Unsupported).To(HaveLen(1))
		Expect(u.Unsupported[0].Func).To(Equal("flag"))
		Expect(u.Unsupported[0].Err).To(MatchError(cgen.ErrUnsupported))
		Expect(string(u.Source)).To(ContainSubstring("int rx_fn_fine("))
		Expect(string(u.Source)).NotTo(ContainSubstring("rx_fn_flag"))
		_, err := cgen.Generate(p)
		Expect(err).To(MatchError(u.Unsupported[0].Err))
	})

	It("refuses a function larger than MaxFuncInstrs with ErrTooLarge, an ErrUnsupported", func() {
		b := irtest.NewFunc("big")
		x := b.Param("x", ir.Float32, 2)
		r := b.Result("r", ir.Float32, 2)
		for range cgen.MaxFuncInstrs + 1 {
			b.Op(ir.Tanh, r, x)
		}
		_, err := cgen.Generate(&ir.Program{File: "t.rx", Funcs: []*ir.Func{b.Fn}})
		Expect(err).To(MatchError(cgen.ErrTooLarge))
		Expect(err).To(MatchError(cgen.ErrUnsupported))
	})
})

package codegen_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/codegen"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
)

// same is the identity: a .rx name is its own identifier.
func same(s string) string { return s }

var _ = Describe("module helpers", func() {
	prog := func() *ir.Program {
		a := irtest.NewFunc("a")
		a.Param("x", ir.Float32, "B", 4)
		a.Result("y", ir.Int64, "B")
		return &ir.Program{File: "p.rx", Funcs: []*ir.Func{a.Fn, irtest.NewFunc("a_").Fn}}
	}

	It("prints a signature on one line", func() {
		Expect(codegen.Signature(prog().Funcs[0])).To(Equal("a(x [B][4]float32) (y [B]int64)"))
	})

	It("names the source and version of a header, with defaults", func() {
		src, ver := codegen.Provenance(prog(), "", "")
		Expect([]string{src, ver}).To(Equal([]string{"p.rx", "(unknown version)"}))
		src, ver = codegen.Provenance(prog(), "s.rx", "v1")
		Expect([]string{src, ver}).To(Equal([]string{"s.rx", "v1"}))
	})

	It("lists every function by default and gives each a unique identifier, in order", func() {
		p := prog()
		Expect(codegen.Funcs(p, nil)).To(Equal([]string{"a", "a_"}))
		Expect(codegen.Funcs(p, []string{"a_"})).To(Equal([]string{"a_"}))
		var got []string
		strip := func(string) string { return "f" }
		Expect(codegen.EachFunc(p, []string{"a", "a_", "a"}, strip, errTrace, func(f *ir.Func, id string) error {
			got = append(got, f.Name+"="+id)
			return nil
		})).To(Succeed())
		Expect(got).To(Equal([]string{"a=f", "a_=f_1", "a=f_2"}))
	})

	It("stops at a missing function or the first error of emit", func() {
		p := prog()
		var got []string
		err := codegen.EachFunc(p, []string{"a", "zz", "a_"}, same, errTrace, func(f *ir.Func, id string) error {
			got = append(got, id)
			return nil
		})
		Expect(err).To(MatchError(errTrace))
		Expect(err.Error()).To(Equal(`trace export: p.rx has no function "zz"`))
		Expect(got).To(Equal([]string{"a"}))
		boom := errors.New("boom")
		Expect(codegen.EachFunc(p, codegen.Funcs(p, nil), same, errTrace, func(*ir.Func, string) error { return boom })).To(MatchError(boom))
	})

	It("makes a file stem of ASCII letters, digits and _", func() {
		Expect(codegen.FileStem("dir/my-model.v2.rx")).To(Equal("my_model_v2"))
		Expect(codegen.FileStem("9é.rx")).To(Equal("9_"))
		Expect(codegen.FileStem(".rx")).To(Equal(""))
	})
})

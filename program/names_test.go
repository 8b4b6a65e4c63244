package program_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

var _ = Describe("the exported name lists", func() {
	It("lists every builtin the checker accepts, and only those", func() {
		names := program.Builtins()
		Expect(names[0]).To(Equal("MatMul"))
		for _, name := range names {
			src := fmt.Sprintf("package p\n\nfunc f(x [2]float32) (y [2]float32) {\n\ty = %s()\n\treturn\n}\n", name)
			_, err := program.Parse("t.rx", []byte(src))
			Expect(err).To(MatchError(ContainSubstring("wrong number of arguments to "+name)), name)
		}
		_, err := program.Parse("t.rx", []byte("package p\n\nfunc f(x [2]float32) (y [2]float32) {\n\ty = Frobnicate(x)\n\treturn\n}\n"))
		Expect(err).To(MatchError(ContainSubstring("unknown function Frobnicate")))
	})

	It("lists every directive the checker accepts, at the level it accepts it", func() {
		Expect(program.Directives()).To(Equal(append(program.FileDirectives(), program.FuncDirectives()...)))
		for _, name := range program.FileDirectives() {
			text := "//rx:" + name
			if name == "signed-zeros" {
				text += " 1" // takes no arguments: an argument is the usage error
			}
			_, err := program.Parse("t.rx", []byte(text+"\npackage p\n"))
			Expect(err).To(HaveOccurred(), name) // no arguments: a usage error, not "unknown directive"
			Expect(err.Error()).NotTo(ContainSubstring("unknown directive"), name)
		}
		for _, name := range program.FuncDirectives() {
			// lock-next and lock-same match relative to an earlier lock.
			args := `"rx_tanh"`
			if name == "skip" {
				args = `onnxruntime "a reason"`
			}
			src := "package p\n\nfunc f(x [2]float32) (y [2]float32) {\n\t//rx:lock \"rx_copy\"\n\t//rx:" + name + " " + args + "\n\ty = x\n\treturn\n}\n"
			_, err := program.Parse("t.rx", []byte(src))
			Expect(err).NotTo(HaveOccurred(), name)
		}
		_, err := program.Parse("t.rx", []byte("//rx:frobnicate 1\npackage p\n"))
		Expect(err).To(MatchError(ContainSubstring("unknown directive //rx:frobnicate")))
	})

	It("returns copies that callers may change", func() {
		d := program.FileDirectives()
		d[0] = "changed"
		Expect(program.FileDirectives()[0]).To(Equal("scenario"))
	})
})

var _ = Describe("//rx:signed-zeros", func() {
	It("sets File.SignedZeros, takes no arguments and may be given once", func() {
		f, err := program.Parse("t.rx", []byte("//rx:signed-zeros\npackage p\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(f.SignedZeros).To(BeTrue())
		_, err = program.Parse("t.rx", []byte("//rx:signed-zeros on\npackage p\n"))
		Expect(err).To(MatchError(ContainSubstring("//rx:signed-zeros takes no arguments")))
		_, err = program.Parse("t.rx", []byte("//rx:signed-zeros\n//rx:signed-zeros\npackage p\n"))
		Expect(err).To(MatchError(ContainSubstring("//rx:signed-zeros given twice")))
	})
})

package program_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

var _ = Describe("//rx:skip", func() {
	parse := func(line string) (*program.File, error) {
		src := "package p\n\nfunc f(x [2]float32) (y [2]float32) {\n\t" + line + "\n\ty = x\n\treturn\n}\n"
		return program.Parse("t.rx", []byte(src))
	}

	It("names executors that leave the function out, with the reason and the line", func() {
		f, err := parse(`//rx:skip onnxruntime,onnxruntime-noopt "ReduceMax ignores NaN"`)
		Expect(err).NotTo(HaveOccurred())
		fn := f.Funcs[0]
		Expect(fn.Skips).To(HaveLen(1))
		sk, ok := fn.SkipFor("onnxruntime-noopt")
		Expect(ok).To(BeTrue())
		Expect(sk.Reason).To(Equal("ReduceMax ignores NaN"))
		Expect(sk.Executors).To(Equal([]string{"onnxruntime", "onnxruntime-noopt"}))
		Expect(sk.Pos.String()).To(Equal("t.rx:4:2"))
		_, ok = fn.SkipFor("native")
		Expect(ok).To(BeFalse())
	})

	DescribeTable("is an error without a reason, with a bad name, or for the oracle",
		func(line, want string) {
			_, err := parse(line)
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("no reason", `//rx:skip onnxruntime`, "wants executor names and a non-empty quoted reason"),
		Entry("empty reason", `//rx:skip onnxruntime ""`, "wants executor names and a non-empty quoted reason"),
		Entry("unquoted reason", `//rx:skip onnxruntime because`, "wants executor names and a non-empty quoted reason"),
		Entry("bad name", `//rx:skip 9x "r"`, `"9x" is not an executor that can be skipped`),
		Entry("the oracle", `//rx:skip oracle "r"`, `"oracle" is not an executor that can be skipped`),
	)

	It("is a function-level directive", func() {
		_, err := program.Parse("t.rx", []byte("//rx:skip onnxruntime \"r\"\npackage p\n"))
		Expect(err).To(MatchError(ContainSubstring("must be written inside the body")))
	})
})

package main

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("rxeq selftest on a user's files", func() {
	write := func(name, src string) string {
		path := filepath.Join(GinkgoT().TempDir(), name)
		Expect(os.WriteFile(path, []byte(src), 0o600)).To(Succeed())
		return path
	}
	const scorer = "//rx:scenario user\n//rx:batches 4\n//rx:input x normal(0, 1)\npackage p\n\n" +
		"func f(x [B][5]float32) (logits [B][5]float32, probs [B][5]float32, classes [B]int64) {\n" +
		"\tlogits = Tanh(x)\n\tprobs = Softmax(logits, 1)\n\tclasses = Argmax(probs, 1)\n\treturn\n}\n"

	It("exits 0 when the only mutant not caught had nothing to break, and says so", func() {
		code, out, errOut := rxeq("selftest", write("user.rx", scorer))
		Expect(code).To(Equal(exitOK), out+errOut)
		Expect(out).To(MatchRegexp(`wrong-error-text\s+0\s+0\s+NOT EXERCISED`))
		Expect(out).To(ContainSubstring("7 caught, 0 escaped, 1 not exercised (your files give them nothing to break; not a failure without --strict)"))
		code, _, errOut = rxeq("selftest", "--strict", write("user.rx", scorer))
		Expect(code).To(Equal(exitFail))
		Expect(errOut).To(ContainSubstring("wrong-error-text (not exercised: 0 of 0 broken cases flagged)"))
	})

	It("leaves out the mutants of --skip and refuses an unknown one", func() {
		code, out, errOut := rxeq("selftest", "--strict", "--skip", "wrong-error-text", write("user.rx", scorer))
		Expect(code).To(Equal(exitOK), out+errOut)
		Expect(out).NotTo(ContainSubstring("wrong-error-text"))
		Expect(out).To(ContainSubstring("7 caught, 0 escaped\n"))
		code, _, errOut = rxeq("selftest", "--skip", "nope", write("user.rx", scorer))
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring(`--skip: unknown mutant "nope" (want one of class-flip,`))
	})

	It("exits 1 on files that already fail, instead of counting every mutant caught", func() {
		failing := "//rx:scenario failing\n//rx:batches 4\n//rx:input x normal(0, 1)\n//rx:tolerance y rtol=0 atol=0\npackage p\n\n" +
			"func f(x [B][8]float32) (y [B][8]float32) {\n\ty = Exp(Tanh(x) * 3.7)\n\treturn\n}\n"
		code, out, errOut := rxeq("selftest", write("failing.rx", failing))
		Expect(code).To(Equal(exitFail))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("the files fail without any mutant: 1 case(s) fail through the unbroken fallback interpreter"))
	})
})

package main

import (
	"os"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/selftest"
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

	It("runs a canary for every rule of the judgement after the mutants, and lists the rules covered", func() {
		code, out, errOut := rxeq("selftest", "--strict", "--skip", "wrong-error-text", write("user.rx", scorer))
		Expect(code).To(Equal(exitOK), out+errOut)
		Expect(out).To(MatchRegexp(`RULE\s+CANARY\s+VERDICT\s+WHAT`))
		Expect(out).To(MatchRegexp(`\nnear-tie-inf\s+finite-for-inf-best\s+flagged\s+row 2 \(scores \+Inf 5 3 1\) given class 1\n`))
		Expect(out).To(MatchRegexp(`\ntolerance-ulp\s+two-ulp-for-ulp-1\s+flagged\s+`))
		Expect(out).To(MatchRegexp(`\nexternal-crc-missing\s+nocrc\s+flagged\s+`))
		for _, r := range selftest.Rules() {
			Expect(out).To(MatchRegexp(`\n%s\s+\S+\s+flagged\s`, regexp.QuoteMeta(r.ID)))
		}
		Expect(out).To(MatchRegexp(`\nrules covered: %d of %d \(%d of %d canaries flagged; [1-9]\d* of them by rxeq run's runner too\)\n`,
			len(selftest.Rules()), len(selftest.Rules()), len(selftest.Canaries()), len(selftest.Canaries())))
		Expect(errOut).To(BeEmpty())

		code, out, _ = rxeq("selftest", "--strict", "--skip", "wrong-error-text", "--no-canaries", write("user.rx", scorer))
		Expect(code).To(Equal(exitOK))
		Expect(out).NotTo(ContainSubstring("rules covered"))
	})

	It("has a hidden hostile executor that refuses an unknown misbehaviour", func() {
		code, _, errOut := rxeq(selftest.HostileArg, "--misbehave", "nope")
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring(`rxeq selftest-executor: unknown misbehaviour "nope" (want one of dims, dtype, mutate, nocrc, ok, protocol, wrongcrc)`))
		code, out, _ := rxeq("-h")
		Expect(code).To(Equal(exitOK))
		Expect(out).NotTo(ContainSubstring("selftest-executor"))
	})
})

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

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

var _ = Describe("rxeq selftest against a weakened judgement", Label("e2e", "slow"), func() {
	// The four weakenings of issue 30, planted in rxeq's own source by a
	// build overlay (go build -overlay: the tree is not touched), all in
	// one binary: each makes its own canary pass, so the self-test fails
	// and names every one of their rules.
	weakenings := []struct{ file, from, to, rule string }{
		{"compare/compare.go", "\t\t\tif w != g {\n\t\t\t\tm.NonFiniteMismatches++",
			"\t\t\tif w != g && !(math.IsInf(w, 0) && math.IsInf(g, 0)) {\n\t\t\t\tm.NonFiniteMismatches++", "inf-plus-vs-minus"},
		{"compare/classes.go", "(!math.IsInf(top, 0) && math.Abs(top-v) <= tol.Allowed(top))", "(math.Abs(top-v) <= tol.Allowed(top))", "near-tie-inf"},
		{"compare/outputs.go", "UseULP: t.HasULP,", "UseULP: false,", "tolerance-ulp"},
		{"harness/blame.go", "if within(wf[i], rf[i], tol) || !within(rf[i], gf[i], tol) {", "if !within(rf[i], gf[i], tol) {", "blame-rounded-misses"},
	}

	It("exits 1 naming the rule of each weakening", func() {
		dir := GinkgoT().TempDir()
		root, err := filepath.Abs("../..")
		Expect(err).NotTo(HaveOccurred())
		replace := map[string]string{}
		for i, w := range weakenings {
			src, err := os.ReadFile(filepath.Join(root, w.file))
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.Count(string(src), w.from)).To(Equal(1), "%s no longer holds the text this weakening replaces", w.file)
			weak := filepath.Join(dir, fmt.Sprintf("weak%d.go", i))
			Expect(os.WriteFile(weak, []byte(strings.Replace(string(src), w.from, w.to, 1)), 0o600)).To(Succeed())
			replace[filepath.Join(root, w.file)] = weak
		}
		overlay, err := json.Marshal(map[string]any{"Replace": replace})
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600)).To(Succeed())
		bin := filepath.Join(dir, "rxeq-weak")
		build := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, ".")
		msg, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(msg))

		var stdout, stderr strings.Builder
		cmd := exec.Command(bin, "selftest")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		var exit *exec.ExitError
		Expect(errors.As(err, &exit)).To(BeTrue(), "rxeq selftest must fail: %v\n%s", err, stdout.String())
		Expect(exit.ExitCode()).To(Equal(exitFail))
		Expect(stderr.String()).To(ContainSubstring("rxeq selftest: a rule of the judgement let its canary pass: "))
		for _, w := range weakenings {
			Expect(stderr.String()).To(MatchRegexp(`rule %s: canary \S+ was not flagged`, regexp.QuoteMeta(w.rule)))
			Expect(stdout.String()).To(MatchRegexp(`\n%s\s+\S+\s+MISSED\s`, regexp.QuoteMeta(w.rule)))
		}
		Expect(stdout.String()).To(ContainSubstring("8 caught, 0 escaped"), "the catalog's mutants do not see these weakenings")
	})
})

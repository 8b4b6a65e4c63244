package main

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Issue 13: the command for a newcomer.
var _ = Describe("rxeq for a newcomer", Label("e2e"), func() {
	It("takes catalog scenario names, as rxeq list shows them, in gen and lock", func() {
		code, out, errOut := rxeq("gen", "--func", "score_linear", "reference-scoring")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("int rx_fn_score_linear("))
		code, out, errOut = rxeq("lock", "reference-scoring")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("PASS reference-scoring/score_linear"))
		code, _, errOut = rxeq("gen", "no-such-scenario")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("no-such-scenario"))
	})

	It("refuses an unwritable report path at once, before any work", func() {
		dir := GinkgoT().TempDir()
		ro := filepath.Join(dir, "ro")
		Expect(os.Mkdir(ro, 0o500)).To(Succeed())
		if os.Getuid() == 0 {
			// root writes anywhere: use a path under a file instead.
			Expect(os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)).To(Succeed())
			ro = filepath.Join(dir, "file")
		}
		for _, flag := range []string{"--json", "--junit"} {
			code, out, errOut := rxeq("run", flag, filepath.Join(ro, "r.out"))
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(flag + " " + filepath.Join(ro, "r.out") + ": cannot write it"))
			Expect(out).To(BeEmpty(), "nothing ran")
		}
		code, out, errOut := rxeq("run", "--dump", filepath.Join(ro, "d"))
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--dump"))
		Expect(out).To(BeEmpty())
	})

	It("ends a run with the plain closing line CI systems read", func() {
		code, out, _ := rxeq("run", "--backend", "oracle,fallback", "../../scenarios/reference.rx")
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`(?m)\n21 passed, 0 failed\n$`))
	})
})

var _ = Describe("flags", Label("e2e"), func() {
	It("takes flags after the positional arguments", func() {
		code, out, _ := rxeq("run", "../../scenarios/reference.rx", "--batch", "1", "--backend", "oracle,fallback")
		Expect(code).To(Equal(0))
		Expect(out).To(MatchRegexp(`(?m)^9 passed, 0 failed$`))
		code, out, _ = rxeq("gen", "../../scenarios/reference.rx", "--func", "score_linear")
		Expect(code).To(Equal(0))
		Expect(out).To(HavePrefix("/* score_linear: "))
	})
})

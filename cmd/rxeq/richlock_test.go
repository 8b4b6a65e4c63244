package main

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("FileCheck's CHECK-NEXT, CHECK-SAME and variables in locks", func() {
	// body is richlock.rx's function with its lock lines replaced.
	withLocks := func(locks ...string) string {
		src, err := os.ReadFile("testdata/richlock.rx")
		Expect(err).NotTo(HaveOccurred())
		var kept []string
		for _, l := range strings.Split(string(src), "\n") {
			if !strings.Contains(l, "//rx:lock") {
				kept = append(kept, l)
			}
			if strings.HasPrefix(l, "func f(") {
				for _, k := range locks {
					kept = append(kept, "\t"+k)
				}
			}
		}
		path := filepath.Join(GinkgoT().TempDir(), "rich.rx")
		Expect(os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o600)).To(Succeed())
		return path
	}

	It("holds lock-next, lock-same and a captured temporary used again", func() {
		code, out, errOut := rxeq("lock", "testdata/richlock.rx")
		Expect(code).To(Equal(exitOK), out+errOut)
		Expect(out).To(ContainSubstring("PASS rich-lock/f: 5 checks"))
	})

	It("fails lock-next when the next line is another, saying where it does match", func() {
		path := withLocks(`//rx:lock "for (int64_t i = 0; i < 3; i++) {"`, `//rx:lock-next "rx_move(&rx_c, y,"`)
		code, out, _ := rxeq("lock", path)
		Expect(code).To(Equal(exitFail))
		Expect(out).To(MatchRegexp(`//rx:lock-next "rx_move\(&rx_c, y," \(.*rich.rx:\d+:\d+\)`))
		Expect(out).To(MatchRegexp(`no match on line \d+, the line after the previous match \(lock-next\); it matches later, at line \d+`))
	})

	It("fails a use of a captured variable whose value differs", func() {
		path := withLocks(`//rx:lock "RX_TRY(rx_tanh(&rx_c, [[T:rx_t[0-9]+]], y));"`, `//rx:lock "rx_move(&rx_c, y, [[T]])"`)
		code, out, _ := rxeq("lock", path)
		Expect(code).To(Equal(exitFail))
		Expect(out).To(ContainSubstring(`//rx:lock "rx_move(&rx_c, y, [[T]])"`))
	})

	It("refuses lock-next with nothing before it and a variable used before it is defined", func() {
		path := withLocks(`//rx:lock-next "for"`, `//rx:lock "rx_move(&rx_c, y, [[U]])"`)
		code, _, errOut := rxeq("check", path)
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring("//rx:lock-next needs a //rx:lock before it in the function"))
		Expect(errOut).To(ContainSubstring("[[U]] is used before a check defines it with [[U:REGEXP]]"))
	})
})

package lock_test

import (
	"go/token"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/program"
)

func lockAt(text string, line int) program.Lock {
	return program.Lock{Kind: program.LockMatch, Text: text, Pos: token.Position{Filename: "score.rx", Line: line, Column: 2}}
}

func lockRE(text string, line int) program.Lock {
	l := lockAt(text, line)
	l.Regexp = true
	return l
}

func lockNot(text string, line int) program.Lock {
	l := lockAt(text, line)
	l.Kind = program.LockNot
	return l
}

const loopHead = "for (int64_t round_idx = 0; round_idx < 4; ++round_idx)"

var _ = Describe("Check", func() {
	var csrc []byte
	BeforeEach(func() {
		var err error
		csrc, err = os.ReadFile("testdata/locks.c")
		Expect(err).NotTo(HaveOccurred())
	})

	It("finds the function's body and matches checks in order", func() {
		r := lock.Check(csrc, "rx_score_loop", []program.Lock{
			lockAt(loopHead, 10), lockAt("rx_checked_rem(round_idx + phase, 2, &r)", 11),
			lockAt("rx_relu(", 12), lockAt("rx_tanh(", 13), lockNot("rx_sigmoid", 14),
		})
		Expect(r.Message).To(BeEmpty())
		Expect(r.OK).To(BeTrue())
		Expect(r.Found).To(BeTrue())
		Expect(r.BodyLines).To(Equal([2]int{30, 42}))
		lines := []int{}
		for _, c := range r.Checks {
			lines = append(lines, c.Line)
		}
		Expect(lines).To(Equal([]int{31, 32, 36, 38, 0}))
	})

	It("is not satisfied by a decoy function holding the exact loop", func() {
		r := lock.Check(csrc, "rx_score_linear", []program.Lock{lockAt(loopHead, 10)})
		Expect(r.OK).To(BeFalse())
		Expect(r.Checks[0].OK).To(BeFalse())
		Expect(r.Message).To(Equal(`source lock failed in function rx_score_linear: //rx:lock "for (int64_t round_idx = 0; round_idx < 4; ++round_idx)" (score.rx:10:2)
  search started at line 20 (the top of the body)
  no match after the search start
  generated body of rx_score_linear (>> marks the nearest near-miss, line 23):
       20 | int rx_score_linear(const float *x, float *logits, int64_t phase) {
       21 | 	int64_t r;
       22 | 	rx_matmul(x, w, logits);
  >>   23 | 	for (int64_t i = 0; i < 16; ++i) {
       24 | 		logits[i] += b[i];
       25 | 	}
       26 | 	return 0;
       27 | }`))
	})

	It("fails checks out of order and says where the text is", func() {
		r := lock.Check(csrc, "rx_score_loop", []program.Lock{lockAt("rx_tanh(", 12), lockAt("rx_relu(", 13), lockAt("return 0;", 14)})
		Expect(r.OK).To(BeFalse())
		Expect(r.Checks[0].OK).To(BeTrue())
		Expect(r.Checks[1].OK).To(BeFalse())
		Expect(r.Checks[2].Skipped).To(BeTrue())
		Expect(r.Message).To(ContainSubstring(`//rx:lock "rx_relu(" (score.rx:13:2)`))
		Expect(r.Message).To(ContainSubstring("search started at line 38 (after the previous check matched at line 38)"))
		Expect(r.Message).To(ContainSubstring("it does match at line 36, before it (checks match in order)"))
		Expect(r.Message).To(ContainSubstring(">>   36 | \t\t\trx_relu(logits, 16);"))
	})

	It("fails a lock-not that appears anywhere in the body", func() {
		r := lock.Check(csrc, "rx_score_loop", []program.Lock{lockAt("return 0;", 10), lockNot("rx_tanh", 11)})
		Expect(r.OK).To(BeFalse())
		Expect(r.Checks[0].OK).To(BeTrue())
		Expect(r.Checks[1].Line).To(Equal(38))
		Expect(r.Message).To(ContainSubstring("source lock failed in function rx_score_loop: //rx:lock-not \"rx_tanh\" (score.rx:11:2)"))
		Expect(r.Message).To(ContainSubstring("must not appear in the body, but does at line 38"))
		Expect(r.Message).To(ContainSubstring(">>   38 | \t\t\trx_tanh(logits, 16);"))

		ok := lock.Check(csrc, "rx_score_linear", []program.Lock{lockNot("rx_tanh", 11)})
		Expect(ok.OK).To(BeTrue())
	})

	It("matches regexps (RE2) and marks the line sharing the most tokens", func() {
		re := lockRE(`for \(int64_t \w+ = 0; \w+ < 4;`, 10)
		Expect(lock.Check(csrc, "rx_score_loop", []program.Lock{re}).OK).To(BeTrue())
		r := lock.Check(csrc, "rx_score_linear", []program.Lock{re})
		Expect(r.OK).To(BeFalse())
		Expect(r.Message).To(ContainSubstring("//rx:lock `for \\(int64_t \\w+ = 0; \\w+ < 4;` (score.rx:10:2)"))
		Expect(r.Message).To(ContainSubstring(">>   23 | \tfor (int64_t i = 0; i < 16; ++i) {"))
	})

	It("is not confused by braces in comments, strings, characters and macros", func() {
		r := lock.Check(csrc, "rx_decoy", []program.Lock{lockAt("const char *s", 1), lockAt("return c == s[0];", 2), lockNot("rx_matmul", 3)})
		Expect(r.Message).To(BeEmpty())
		Expect(r.BodyLines).To(Equal([2]int{10, 18}))
		// The banner string names rx_score_linear with a brace; the real body is still found.
		r = lock.Check(csrc, "rx_score_linear", []program.Lock{lockAt("rx_matmul(x, w, logits);", 1)})
		Expect(r.OK).To(BeTrue())
		Expect(r.Checks[0].Line).To(Equal(22))
	})

	It("does not take a prototype for a definition", func() {
		src := []byte("int rx_f(const float *x);\nint rx_g(void) { return rx_f(0); }\n")
		r := lock.Check(src, "rx_f", []program.Lock{lockAt("return", 1)})
		Expect(r.Found).To(BeFalse())
		Expect(r.OK).To(BeFalse())
		Expect(r.Message).To(Equal("source lock of rx_f: no definition of function rx_f in the generated C (functions defined: rx_g)"))
	})

	It("fails an invalid regexp", func() {
		r := lock.Check(csrc, "rx_score_loop", []program.Lock{lockRE(`for (`, 4)})
		Expect(r.OK).To(BeFalse())
		Expect(r.Message).To(ContainSubstring("invalid regexp: error parsing regexp"))
	})
})

var _ = Describe("CFunction", func() {
	It("returns one definition with its header comment, never a decoy", func() {
		src := []byte("/* a: t.rx:1:1 */\nint rx_fn_a(void)\n{\n\tfor (;;) {}\n}\n\n/* b: t.rx:5:1 */\nint rx_fn_b(void)\n{\n\treturn 0;\n}\n")
		def, ok := lock.CFunction(src, "rx_fn_b")
		Expect(ok).To(BeTrue())
		Expect(def).To(Equal("/* b: t.rx:5:1 */\nint rx_fn_b(void)\n{\n\treturn 0;\n}"))
		_, ok = lock.CFunction(src, "rx_fn_c")
		Expect(ok).To(BeFalse())
	})
})

package lock_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/program"
)

// longBody is a C function of 60 statements with the loop at statement
// 40 (line 42 of the source): a body too long to print whole.
func longBody() []byte {
	var s strings.Builder
	s.WriteString("/* a long function */\nint rx_long(float *y) {\n")
	for i := 1; i <= 60; i++ {
		if i == 40 {
			s.WriteString("\tfor (int64_t round_idx = 0; round_idx < 3; ++round_idx) { }\n")
			continue
		}
		fmt.Fprintf(&s, "\ty[%d] = %d;\n", i, i)
	}
	s.WriteString("\treturn 0;\n}\n")
	return []byte(s.String())
}

var _ = Describe("a lock failure in a long body", func() {
	It("shows the lines near the search start and the near miss, and marks what it cuts", func() {
		r := lock.Check(longBody(), "rx_long", []program.Lock{lockAt("y[3] = 3;", 9), lockAt(loopHead, 10)})
		Expect(r.OK).To(BeFalse())
		Expect(r.Message).To(ContainSubstring("search started at line 5 (after the previous check matched at line 5)"))
		Expect(r.Message).To(ContainSubstring(">>   42 | \tfor (int64_t round_idx = 0; round_idx < 3; ++round_idx) { }"))
		// The body's first line, the search start ±5 and the miss ±5.
		for _, shown := range []string{"    2 | int rx_long", "   10 | \ty[8] = 8;", "   37 | \ty[35] = 35;", "   47 | \ty[45] = 45;"} {
			Expect(r.Message).To(ContainSubstring(shown))
		}
		for _, cut := range []string{"   11 | ", "   36 | ", "   48 | ", "   64 | }"} {
			Expect(r.Message).NotTo(ContainSubstring(cut))
		}
		Expect(r.Message).To(ContainSubstring("⋮ (26 lines not shown)"))
		Expect(r.Message).To(ContainSubstring("⋮ (17 lines not shown)"))
		Expect(strings.Count(r.Message, "\n")).To(BeNumerically("<", 35))
	})

	It("shows a short body whole", func() {
		src := []byte("int rx_short(void) {\n\tint a = 1;\n\treturn a;\n}\n")
		r := lock.Check(src, "rx_short", []program.Lock{lockAt("return b;", 3)})
		Expect(r.Message).NotTo(ContainSubstring("not shown"))
		Expect(r.Message).To(ContainSubstring(">>    3 | \treturn a;"))
		Expect(r.Message).To(ContainSubstring("      4 | }"))
	})
})

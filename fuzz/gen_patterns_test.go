package fuzz_test

import (
	"regexp"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fuzz"
)

// first2000 is the source of the programs of seeds 0 to 1999, generated once.
var first2000 = sync.OnceValue(func() [][]byte {
	out := make([][]byte, 2000)
	for seed := range out {
		out[seed] = fuzz.Generate(uint64(seed), fuzz.Config{}).Source
	}
	return out
})

var _ = Describe("Generate reaches the patterns real code has", func() {
	// Each pattern must appear in at least 10 of the first 2000 programs.
	DescribeTable("in the first 2000 seeds",
		func(pattern string) {
			re := regexp.MustCompile(pattern)
			n := 0
			for _, src := range first2000() {
				if re.Match(src) {
					n++
				}
			}
			Expect(n).To(BeNumerically(">=", 10), "programs matching %s", pattern)
		},
		Entry("a result that starts as a parameter's buffer (r = p), updated later", `(?m)^\s*out\d+ = [a-z]\d+\n`),
		Entry("a variable updated elementwise from itself (v = Tanh(v), …)", `(?m)^\s*(\w+) = (Tanh|Abs|Relu|Sigmoid)\((\w+)\)\n`),
		Entry("a variable updated by a reduction of itself kept to its shape", `(?m)^\s*(\w+) = \((\w+) - Mean\(\w+, -?\d+, true\)\) \* 0\.5\n`),
		Entry("a variable overwritten with another's value (a copy into a buffer of the same shape)", `(?m)^\s*t\d+ = [a-z]+\d+\n`),
		Entry("a loop over a local count that its body assigns", `(?m)^\t+n\d+ := [^\n]*\n\t+for (\w+ := )?range n\d+ \{\n(\t[^\n]*\n)*?\t+n\d+ (=|-=) `),
		Entry("a reassignment inside a loop", `(?m)^\t\tfor [^\n]*\{\n(\t\t\t[^\n]*\n)*?\t\t\tt\d+ = `),
		Entry("Exp's subnormal results and Sigmoid below -88.7", `uniform\(-104, -86\)`),
		Entry("Sigmoid where 1 - tanh cancels", `uniform\(-45, -30\)`),
		Entry("Tanh through its saturation", `uniform\(-10, 10\)`),
		Entry("Log and Sqrt of subnormals", `uniform\(0, 4e-38\)`),
		Entry("Log of a Sigmoid or an Exp that may be a flushed subnormal", `Log\((Sigmoid|Exp)\(`),
	)
})

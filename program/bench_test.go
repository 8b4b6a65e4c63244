package program_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rextio/rxeq/program"
)

// flatSum is a function whose one statement sums n terms: y = x + x + … .
func flatSum(n int) []byte {
	return []byte("package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x" + strings.Repeat(" + x", n-1) + "\n\treturn\n}\n")
}

// nestedCalls is a function of stmts statements, each depth calls deep:
// y = Tanh(Tanh(…Tanh(y)…)).
func nestedCalls(stmts, depth int) []byte {
	var b strings.Builder
	b.WriteString("package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x\n")
	for range stmts {
		b.WriteString("\ty = " + strings.Repeat("Tanh(", depth) + "y" + strings.Repeat(")", depth) + "\n")
	}
	b.WriteString("\treturn\n}\n")
	return []byte(b.String())
}

// benchParse parses src b.N times and reports the time per expression
// node: equal ns/node at two sizes shows that checking is linear.
func benchParse(b *testing.B, src []byte, nodes int) {
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := program.Parse("t.rx", src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

// BenchmarkParseFlatSum checks a 1,000- and a 10,000-term sum.
func BenchmarkParseFlatSum(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) { benchParse(b, flatSum(n), 2*n) })
	}
}

// BenchmarkParseNested checks 4 and 40 statements of 250 nested calls
// (1,000 and 10,000 calls), just under the nesting limit.
func BenchmarkParseNested(b *testing.B) {
	const depth = 250
	for _, stmts := range []int{4, 40} {
		b.Run(fmt.Sprintf("calls=%d", stmts*depth), func(b *testing.B) { benchParse(b, nestedCalls(stmts, depth), stmts*depth) })
	}
}

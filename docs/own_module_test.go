package docs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// scorerGo is the Go implementation under test in the walk-through of
// testing-your-code.md: Score2 as its user would write it, float32 data
// with float64 sums. (Rounding the logits to float32 before the softmax
// is a bug the sweep finds: edge(huge) inputs overflow them to +Inf, and
// the probabilities become NaN where the specification's are 0 and 1.)
const scorerGo = `package scorer

import (
	"errors"
	"math"
)

// Score2 is relu(x·w1)·w2, softmax over each row, and each row's argmax.
func Score2(x, w1, w2 []float32, b int) (probs []float32, classes []int64, err error) {
	if len(x) != b*8 || len(w1) != 8*16 || len(w2) != 16*4 {
		return nil, nil, errors.New("score2: wrong sizes")
	}
	probs, classes = make([]float32, b*4), make([]int64, b)
	for r := 0; r < b; r++ {
		var h [16]float32
		for j := range h {
			var s float64
			for k := 0; k < 8; k++ {
				s += float64(x[r*8+k]) * float64(w1[k*16+j])
			}
			h[j] = float32(max(s, 0))
		}
		var z [4]float64
		m := math.Inf(-1)
		for c := range z {
			for j := range h {
				z[c] += float64(h[j]) * float64(w2[j*4+c])
			}
			m = max(m, z[c])
		}
		var sum float64
		for c := range z {
			z[c] = math.Exp(z[c] - m)
			sum += z[c]
		}
		best := 0
		for c := range z {
			probs[r*4+c] = float32(z[c] / sum)
			if probs[r*4+c] > probs[r*4+best] {
				best = c
			}
		}
		classes[r] = int64(best)
	}
	return probs, classes, nil
}
`

// goBlock returns the body of the first fenced block of d in language
// lang whose text contains marker.
func goBlock(d doc, lang, marker string) string {
	GinkgoHelper()
	for _, b := range d.blocks {
		if b.lang == lang && strings.Contains(b.body, marker) {
			return b.body
		}
	}
	Fail(d.name + ": no ```" + lang + " block with " + marker)
	return ""
}

var _ = Describe("testing-your-code.md from the user's own module", func() {
	It("works as written: go get -tool, go tool rxeq check, and the Go test suite with AgreeWith and AgreeOnSweep", func() {
		if testing.Short() {
			Skip("builds rxeq in a module of its own; not under -short")
		}
		root, err := filepath.Abs("..")
		Expect(err).NotTo(HaveOccurred())
		d := readDoc("testing-your-code.md")
		spec := goBlock(d, "go", "//rx:scenario two-layer")
		suite := goBlock(d, "go", "rxginkgo.AgreeOnSweep")

		dir := GinkgoT().TempDir()
		write := func(name, text string) {
			Expect(os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)).To(Succeed())
		}
		write("testdata/scorer.rx", spec)
		write("scorer.go", scorerGo)
		write("scorer_test.go", suite)

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		run := func(args ...string) string {
			GinkgoHelper()
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Dir = dir
			// The module is not published where this runs: the replace
			// stands for the module proxy. Everything else comes from the
			// module cache this test's own build used.
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
			out, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s:\n%s", strings.Join(args, " "), out)
			return string(out)
		}
		run("go", "mod", "init", "example.com/you/scorer")
		run("go", "mod", "edit", "-require", "github.com/rextio/rxeq@v0.0.0-00010101000000-000000000000",
			"-replace", "github.com/rextio/rxeq="+root)
		// The checksum database is not reachable either: rxeq's own go.sum
		// holds the same lines it would give.
		sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
		Expect(err).NotTo(HaveOccurred())
		write("go.sum", string(sums))
		run("go", "get", "-tool", "github.com/rextio/rxeq/cmd/rxeq")
		// go get of the library at @latest, as the page says, needs the
		// proxy; tidy takes the versions rxeq's own go.mod selects.
		run("go", "mod", "tidy")
		Expect(run("go", "tool", "rxeq", "check", "testdata/scorer.rx")).To(ContainSubstring("testdata/scorer.rx: ok (score2)"))
		out := run("go", "test", "-count=1", "-v", "./...")
		Expect(out).To(ContainSubstring("Ran 3 of 3 Specs"))
		Expect(out).To(ContainSubstring("PASS"))
	})
})

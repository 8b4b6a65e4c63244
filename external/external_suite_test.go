package external_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
)

func TestExternal(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "external")
}

// tinySrc is a small two-function scenario that runs in microseconds.
const tinySrc = `//rx:scenario tiny
//rx:batches 1 4 9
//rx:seed 7
//rx:input x normal(0, 1)
//rx:input w normal(0, 0.5)
package tiny

func lin(x [B][4]float32, w [4][3]float32) (logits [B][3]float32, probs [B][3]float32, classes [B]int64) {
	logits = MatMul(x, w)
	probs = Softmax(logits, 1)
	classes = Argmax(probs, 1)
	return
}

func sq(x [B][4]float32) (y [B][4]float32) {
	y = x * x + 1
	return
}
`

func parseRx(name, src string) *program.File {
	f, err := program.Parse(name, []byte(src))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return f
}

func tinyFile() *program.File { return parseRx("tiny.rx", tinySrc) }

// byExecutor returns the cases of one executor.
func byExecutor(cs []harness.Case, name executor.Name) []harness.Case {
	var out []harness.Case
	for _, c := range cs {
		if c.Executor == name {
			out = append(out, c)
		}
	}
	return out
}

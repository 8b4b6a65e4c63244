// Package testprog holds small .rx programs that the specs of several
// packages share, so that each is written once.
package testprog

import "github.com/rextio/rxeq/program"

// TinySrc is a small two-function scenario that runs in microseconds:
// lin (MatMul, Softmax, Argmax: logits, probs and classes) and sq (an
// elementwise function), at batches 1, 4 and 9.
const TinySrc = `//rx:scenario tiny
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

// MustParse parses src as file name and panics when it does not check:
// for programs a spec writes itself.
func MustParse(name, src string) *program.File {
	f, err := program.Parse(name, []byte(src))
	if err != nil {
		panic(err)
	}
	return f
}

// Tiny returns TinySrc parsed as tiny.rx.
func Tiny() *program.File { return MustParse("tiny.rx", TinySrc) }

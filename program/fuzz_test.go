package program_test

import (
	"os"
	"testing"

	"github.com/rextio/rxeq/program"
)

// FuzzParse feeds arbitrary bytes to Parse and, when they check, to Lower
// and the IR printer: none of them may panic, a failure must be an
// ErrorList, and lowering the same file twice prints the same IR.
// Seeds: testdata/fuzz/FuzzParse plus the files below.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/score_linear.rx"} {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(header + `func f(x [B][F]float32, n int64) (y [B][F]float32, k [B]int64) { y = x; for i := range n { if CheckedDiv(i, 2) > 0 || !(i == 1) { y = LogSoftmax(y, -1) } }; k = Argmax(y, 1); return }`))
	f.Add([]byte("package p\n//rx:input x edge(ties)\nfunc f(x [B]float32) (y [B]float32) { y = Maximum(x, 0) / Sum(x, 0, false); return }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := program.Parse("fuzz.rx", src)
		if err != nil {
			if _, ok := err.(program.ErrorList); !ok {
				t.Fatalf("Parse error is %T, want ErrorList: %v", err, err)
			}
			return
		}
		p1, err := program.Lower(file)
		if err != nil {
			t.Fatalf("Lower failed on a checked file: %v", err)
		}
		p2, _ := program.Lower(file)
		if p1.String() != p2.String() {
			t.Fatalf("lowering is not deterministic")
		}
	})
}

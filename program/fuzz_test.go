package program_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rextio/rxeq/program"
)

// FuzzParse feeds arbitrary bytes to Parse and, when they check, to Lower
// and the IR printer: none of them may panic, a failure must be an
// ErrorList, and lowering the same file twice prints the same IR.
// ParseScenario accepts only files that Parse accepts, and fails with an
// ErrorList too. Seeds: testdata/fuzz/FuzzParse, the hostile programs of
// testdata/hostile (overflowing shapes, 10,000 nested calls, a package
// clause alone, …) and the files below.
func FuzzParse(f *testing.F) {
	hostile, err := filepath.Glob("testdata/hostile/*.rx")
	if err != nil || len(hostile) == 0 {
		f.Fatalf("no hostile seeds: %v", err)
	}
	for _, name := range append([]string{"testdata/score_linear.rx"}, hostile...) {
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
		if _, serr := program.ParseScenario("fuzz.rx", src); serr != nil {
			if _, ok := serr.(program.ErrorList); !ok {
				t.Fatalf("ParseScenario error is %T, want ErrorList: %v", serr, serr)
			}
		} else if err != nil {
			t.Fatalf("ParseScenario accepts what Parse rejects: %v", err)
		}
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

package lock

import (
	"fmt"
	"strings"
)

// Generate returns the //rx:lock lines (without indentation) that pin
// the control flow of C function cfunc in csrc as it is now, in the way
// LLVM's update_test_checks writes CHECK lines from a test's current
// output: one literal check per line of the body that opens or closes a
// block of control flow (for, while, if, else), in order. It returns nil
// when the body has none (straight-line code), and an error when csrc has
// no definition of cfunc.
func Generate(csrc []byte, cfunc string) ([]string, error) {
	for _, d := range cDefinitions(csrc) {
		if d.Name != cfunc {
			continue
		}
		b := newLockBody(csrc, &d)
		var out []string
		for _, line := range strings.Split(b.text, "\n") {
			t := strings.TrimSpace(line)
			if isControl(t) {
				out = append(out, fmt.Sprintf("//rx:lock %q", t))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no definition of function %s in the generated C", cfunc)
}

func isControl(t string) bool {
	for _, p := range []string{"for (", "while (", "if (", "} else", "else {", "else if ("} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

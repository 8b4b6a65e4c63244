package lock

import (
	"bytes"
	"strings"
)

// CFunction returns the whole definition of the C function cfunc in csrc
// (its header comment, when the line above the signature is a comment,
// the signature and the body), found the same structural way as the source
// lock's scope; ok is false when csrc defines no such function.
func CFunction(csrc []byte, cfunc string) (def string, ok bool) {
	for _, d := range cDefinitions(csrc) {
		if d.Name != cfunc {
			continue
		}
		start := bytes.LastIndex(csrc[:d.Open], []byte(cfunc))
		start = bytes.LastIndexByte(csrc[:start], '\n') + 1
		if start > 0 {
			prev := bytes.LastIndexByte(csrc[:start-1], '\n') + 1
			if strings.HasPrefix(strings.TrimSpace(string(csrc[prev:start])), "/*") {
				start = prev
			}
		}
		return string(csrc[start : d.Close+1]), true
	}
	return "", false
}

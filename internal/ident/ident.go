// Package ident turns .rx names into identifiers of the languages rxeq
// exports to (Python, JavaScript): a name that is already a safe ASCII
// identifier of the language stays as it is, any other becomes "rx_"
// followed by an injective encoding of it, so that two .rx names never
// meet in one identifier and none collides with a reserved word, a
// builtin, or a name of the generated module.
package ident

import (
	"fmt"
	"strings"
)

// Namer maps .rx names to identifiers of one language.
type Namer struct {
	reserved map[string]bool
}

// New returns the Namer of a language whose reserved words (keywords,
// builtins, the generated module's own names) are the whitespace-separated
// fields of reserved.
func New(reserved string) Namer {
	m := map[string]bool{}
	for _, w := range strings.Fields(reserved) {
		m[w] = true
	}
	return Namer{reserved: m}
}

// Reserved reports whether s is one of the language's reserved words.
func (n Namer) Reserved(s string) bool { return n.reserved[s] }

// Name returns the identifier for name: name itself when it is a safe
// ASCII identifier (letters, digits not first, '_') that is not reserved
// and does not start with "rx_" or "_", else "rx_" followed by name with
// ASCII letters and digits kept, "_" written "__" and any other rune
// "_hex_" (so the encoding is injective and never starts a clash with a
// kept name, none of which starts with "rx_").
func (n Namer) Name(name string) string {
	if n.safe(name) {
		return name
	}
	var b strings.Builder
	b.WriteString("rx_")
	for _, r := range name {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r == '_':
			b.WriteString("__")
		default:
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	return b.String()
}

func (n Namer) safe(s string) bool {
	if s == "" || n.reserved[s] || strings.HasPrefix(s, "rx_") || strings.HasPrefix(s, "_") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		case c == '_':
		default:
			return false
		}
	}
	return true
}

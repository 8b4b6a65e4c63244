package jsexport

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rextio/rxeq/internal/ident"
)

// jsNames maps .rx names to JavaScript identifiers that are never one of
// JavaScript's reserved words (strict mode included), the globals a module
// uses, or the module's own names.
var jsNames = ident.New(`
break case catch class const continue debugger default delete do else enum export extends false finally
for function if import in instanceof new null return super switch this throw true try typeof var void
while with yield let static implements interface package private protected public await async of
arguments eval undefined NaN Infinity globalThis Object Array Number BigInt String Boolean Symbol Error
TypeError RangeError Math JSON Promise Map Set BigInt64Array Int32Array Float32Array Float64Array
require module exports process console __filename __dirname constructor prototype
tf i64 checkedRem checkedDiv int64 RxeqError
`)

// jsName returns the JavaScript identifier for a .rx name: the name
// itself when it is a safe ASCII identifier that is not reserved and does
// not start with "rx_" or "_", else "rx_" + an injective encoding (ASCII
// letters and digits stay, "_" is "__", any other rune "_hex_").
func jsName(name string) string { return jsNames.Name(name) }

// jsString returns s as a JavaScript string literal of printable ASCII:
// double-quoted, with \\ and \", and every other rune outside 0x20–0x7e
// written as a \u escape (\u{…} above U+FFFF). A byte that is not valid
// UTF-8 becomes U+FFFD, as it does in the protocol's JSON.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\u{%x}`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// commentText renders s for a // comment on one line: printable ASCII
// stays (but never "*/"), every other byte is written as \xNN.
func commentText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' && !(c == '*' && i+1 < len(s) && s[i+1] == '/') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, `\x%02x`, c)
	}
	return b.String()
}

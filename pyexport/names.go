package pyexport

import (
	"fmt"
	"strings"

	"github.com/rextio/rxeq/internal/ident"
)

// pythonNames maps .rx names to Python identifiers that are never one of
// Python's keywords (hard and soft), its builtins, or the module's own names.
var pythonNames = ident.New(`
False None True and as assert async await break class continue def del elif else except finally for from
global if import in is lambda nonlocal not or pass raise return try while with yield match case type _
abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex
copyright credits delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr
globals hasattr hash help hex id input int isinstance issubclass iter len license list locals map max
memoryview min next object oct open ord pow print property quit range repr reversed round set setattr
slice sorted staticmethod str sum super tuple vars zip __import__ __name__ __file__ __doc__ __builtins__
__debug__ __annotations__ __all__ __spec__ __loader__ __package__ __dict__ __class__ self annotate
BaseException Exception ArithmeticError ZeroDivisionError OverflowError RuntimeError ValueError TypeError
AssertionError IndexError KeyError NotImplemented NotImplementedError Ellipsis StopIteration
torch np numpy math typing Tuple List Optional Tensor
checked_rem checked_div i64 softmax log_softmax sigmoid
`)

// pyName returns the Python identifier for a .rx name: the name itself
// when it is a safe ASCII identifier that is not reserved and does not
// start with "rx_" or "_", else "rx_" + an injective encoding (see the
// package doc).
func pyName(name string) string { return pythonNames.Name(name) }

// pyString returns s as a Python string literal of printable ASCII:
// double-quoted, with \\, \", and every other byte outside 0x20–0x7e
// (newlines, control characters, the bytes of non-ASCII runes) written as
// \u escapes of its rune, or \x of a byte that is not valid UTF-8.
// TorchScript's lexer reads the same escapes.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == 0xFFFD && strings.HasPrefix(s[i:], "\xef\xbf\xbd"):
			b.WriteString(`\ufffd`)
		case r == 0xFFFD:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// CommentText renders s for a Python # comment on one line: printable
// ASCII stays, every other byte (newlines, backslashes, non-ASCII) is
// written as \xNN, so nothing from a program ends the comment. The
// reproducers of other packages written in Python use it too.
func CommentText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, `\x%02x`, c)
	}
	return b.String()
}

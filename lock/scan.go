package lock

// This file finds one function's body in C source text structurally.

// cDef is a top-level C function definition: its name and the offsets of
// its body's opening and closing braces.
type cDef struct {
	Name        string
	Open, Close int
}

// maskC returns a copy of src, of the same length, in which the contents
// of comments, string and character literals and preprocessor lines are
// replaced by spaces (newlines are kept), so that every brace and
// parenthesis left in it is real code.
func maskC(src []byte) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	blank := func(i int) {
		if out[i] != '\n' {
			out[i] = ' '
		}
	}
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case lineStart && c == '#':
			// A preprocessor line, with backslash continuations.
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					blank(i)
					i += 2
					continue
				}
				blank(i)
				i++
			}
			continue
		}
		lineStart = false
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				blank(i)
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			blank(i)
			blank(i + 1)
			i += 2
			for i < len(src) && !(src[i] == '*' && i+1 < len(src) && src[i+1] == '/') {
				blank(i)
				i++
			}
			if i < len(src) {
				blank(i)
				blank(i + 1)
				i += 2
			}
		case c == '"' || c == '\'':
			blank(i)
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) {
					blank(i)
					i++
				}
				blank(i)
				i++
			}
			if i < len(src) && src[i] == c {
				blank(i)
				i++
			}
		default:
			i++
		}
	}
	return out
}

// cDefinitions returns the top-level function definitions of src in
// order. A definition is a '{' at brace depth 0 whose preceding code (after
// whitespace) is the ')' closing a parameter list directly preceded by an
// identifier, the function's name; its body ends at the matching '}'.
// Prototypes (';' instead of a body), struct and initialiser braces are
// not definitions. Braces and parentheses inside comments, literals and
// preprocessor lines are ignored.
func cDefinitions(src []byte) []cDef {
	code := maskC(src)
	var defs []cDef
	depth := 0
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case '{':
			if depth == 0 {
				if name := defName(code, i); name != "" {
					if end := matchBrace(code, i); end >= 0 {
						defs = append(defs, cDef{Name: name, Open: i, Close: end})
						i = end
						continue
					}
				}
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return defs
}

// defName returns the function name of a definition whose body opens at
// code[open], or "" when the brace does not open a function body.
func defName(code []byte, open int) string {
	j := skipSpaceBack(code, open-1)
	if j < 0 || code[j] != ')' {
		return ""
	}
	level := 0
	for ; j >= 0; j-- {
		if code[j] == ')' {
			level++
		} else if code[j] == '(' {
			level--
			if level == 0 {
				break
			}
		} else if code[j] == ';' || code[j] == '{' || code[j] == '}' {
			return ""
		}
	}
	if j < 0 {
		return ""
	}
	end := skipSpaceBack(code, j-1) + 1
	start := end
	for start > 0 && isIdent(code[start-1]) {
		start--
	}
	if start == end || (code[start] >= '0' && code[start] <= '9') {
		return ""
	}
	return string(code[start:end])
}

func skipSpaceBack(code []byte, j int) int {
	for j >= 0 && (code[j] == ' ' || code[j] == '\t' || code[j] == '\n' || code[j] == '\r' || code[j] == '\f' || code[j] == '\v') {
		j--
	}
	return j
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// matchBrace returns the offset of the '}' matching code[open], or -1.
func matchBrace(code []byte, open int) int {
	depth := 0
	for i := open; i < len(code); i++ {
		switch code[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

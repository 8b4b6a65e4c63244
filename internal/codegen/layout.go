package codegen

import "strings"

// Layout is how a language lays out a statement tree: the indentation of
// one level, what an empty block holds, and the lines around blocks.
type Layout struct {
	// Indent is one level of indentation.
	Indent string
	// Empty is the statement of an empty block ("": nothing).
	Empty string
	// ElseIf goes before the header of an if that is an else branch's
	// only statement ("el" before "if c:"; "} else " before "if (c) {").
	ElseIf string
	// Else is the line between an if's body and its else branch.
	Else string
	// End is the line after a block ("": none).
	End string
}

// Write writes list at depth levels of indentation.
func (l Layout) Write(b *strings.Builder, list []Stmt, depth int) {
	ind := strings.Repeat(l.Indent, depth)
	if len(list) == 0 && l.Empty != "" {
		b.WriteString(ind + l.Empty + "\n")
		return
	}
	for _, s := range list {
		b.WriteString(ind + s.Line + "\n")
		if !s.IsIf && s.Body == nil {
			continue
		}
		l.Write(b, s.Body, depth+1)
		for s.IsIf && len(s.Else) > 0 {
			if len(s.Else) == 1 && s.Else[0].IsIf {
				s = s.Else[0]
				b.WriteString(ind + l.ElseIf + s.Line + "\n")
				l.Write(b, s.Body, depth+1)
				continue
			}
			b.WriteString(ind + l.Else + "\n")
			l.Write(b, s.Else, depth+1)
			break
		}
		if l.End != "" {
			b.WriteString(ind + l.End + "\n")
		}
	}
}

package program

import (
	"fmt"
	"regexp"
	"strings"
)

// lockVar matches a variable of a lock pattern, FileCheck's syntax:
// [[NAME:REGEXP]] defines NAME as what REGEXP matches, [[NAME]] uses it.
var lockVar = regexp.MustCompile(`\[\[([A-Za-z_][A-Za-z0-9_]*)(?::(.*?))?\]\]`)

// HasVars reports whether l's pattern defines or uses a variable.
func (l Lock) HasVars() bool { return lockVar.MatchString(l.Text) }

// Pattern returns l as one RE2 pattern, its variables resolved: a
// literal check's text is quoted, a regexp's kept; [[NAME:RE]] becomes
// the named group (?P<NAME>RE), whose match defines NAME (defines lists
// every named group, a regexp's own (?P<N>…) included); [[NAME]] becomes
// the quoted value vars holds for it. A use of a name vars lacks is an error, and so is a
// pattern that does not compile.
func (l Lock) Pattern(vars map[string]string) (pattern string, defines []string, err error) {
	var b strings.Builder
	last := 0
	quote := func(s string) string {
		if l.Regexp {
			return s
		}
		return regexp.QuoteMeta(s)
	}
	for _, m := range lockVar.FindAllStringSubmatchIndex(l.Text, -1) {
		b.WriteString(quote(l.Text[last:m[0]]))
		name := l.Text[m[2]:m[3]]
		if m[4] >= 0 {
			re := l.Text[m[4]:m[5]]
			if _, err := regexp.Compile(re); err != nil {
				return "", nil, fmt.Errorf("[[%s:%s]]: bad regexp: %v", name, re, err)
			}
			b.WriteString("(?P<" + name + ">" + re + ")")
		} else {
			v, ok := vars[name]
			if !ok {
				return "", nil, fmt.Errorf("[[%s]] is used before a check defines it with [[%s:REGEXP]]", name, name)
			}
			b.WriteString(regexp.QuoteMeta(v))
		}
		last = m[1]
	}
	b.WriteString(quote(l.Text[last:]))
	pattern = b.String()
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", nil, fmt.Errorf("bad regexp: %v", err)
	}
	for _, n := range re.SubexpNames() {
		if n != "" {
			defines = append(defines, n)
		}
	}
	return pattern, defines, nil
}

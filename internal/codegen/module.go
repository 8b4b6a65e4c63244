package codegen

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

// Signature prints a function's .rx signature on one line:
// name(x [B][4]float32) (y [B]float32).
func Signature(f *ir.Func) string {
	list := func(vs []*ir.Value) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.Name + " " + v.Type.String()
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s(%s) (%s)", f.Name, list(f.Params), list(f.Results))
}

// Provenance is what a module's header names: source, or p's file when
// it is empty, and version, or "(unknown version)".
func Provenance(p *ir.Program, source, version string) (src, ver string) {
	src, ver = source, version
	if src == "" {
		src = p.File
	}
	if ver == "" {
		ver = "(unknown version)"
	}
	return src, ver
}

// Funcs is names, or when it is nil every function of p in source order.
func Funcs(p *ir.Program, names []string) []string {
	if names != nil {
		return names
	}
	var out []string
	for _, f := range p.Funcs {
		out = append(out, f.Name)
	}
	return out
}

// EachFunc calls emit, in order, for each function of p named in names
// with its identifier in the module: ident(name), or when another
// function took that, ident(name)_1, _2, .... It stops at the first
// error, of emit or of a name p lacks (that one wraps errBase).
func EachFunc(p *ir.Program, names []string, ident func(string) string, errBase error, emit func(f *ir.Func, id string) error) error {
	taken := map[string]bool{}
	for _, fn := range names {
		f := p.Func(fn)
		if f == nil {
			return fmt.Errorf("%w: %s has no function %q", errBase, p.File, fn)
		}
		id := ident(fn)
		for i := 1; taken[id]; i++ {
			id = fmt.Sprintf("%s_%d", ident(fn), i)
		}
		taken[id] = true
		if err := emit(f, id); err != nil {
			return err
		}
	}
	return nil
}

// FileStem is the base name of file without its extension, every rune
// but ASCII letters, digits and _ replaced by _ (it may be empty or start
// with a digit).
func FileStem(file string) string {
	base := filepath.Base(file)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	for _, r := range base {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Package cmacros finds the preprocessor macros that are defined where
// generated C is compiled: every macro the C compiler predefines and every
// macro the headers of the translation unit define. A program identifier
// spelled like one of them would be replaced by the preprocessor, so the
// native backend's mangler must never keep it. Package native/cgen keeps
// the names in a committed, sorted list (cmacros_gen.go, written by
// `go generate` through ../gencmacros) so that generated C does not depend
// on the machine; its tests compare the list with the local compiler.
package cmacros

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rextio/rxeq/native/runtime"
)

// ErrProbe is the kind of every error of Defined: the compiler could not be
// run, or it rejected the probe.
var ErrProbe = errors.New("probing the C preprocessor")

// Runtime is the C runtime as the generated translation unit sees it:
// HeaderName is the one header the generated code includes, and Files are
// every file of the runtime (that header among them), whose own system
// includes the probe adds so that it covers the runtime's view too.
type Runtime struct {
	HeaderName string
	Files      []runtime.File
}

// Native is rxeq's own runtime (runtime.Native).
func Native() Runtime {
	return Runtime{HeaderName: runtime.HeaderName, Files: runtime.Native().Files}
}

var systemInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>`)

// Probe returns a C file that includes what the generated translation
// unit includes and more: every system header any runtime file includes
// (sorted, each once; the runtime's sources include <math.h> and
// <string.h>, which the header does not), then the runtime header.
// Being a superset is safe: a macro name mangled needlessly costs nothing.
func Probe(rt Runtime) string {
	var hdrs []string
	for _, f := range rt.Files {
		for _, m := range systemInclude.FindAllStringSubmatch(f.Text, -1) {
			hdrs = append(hdrs, strings.TrimSpace(m[1]))
		}
	}
	slices.Sort(hdrs)
	hdrs = slices.Compact(hdrs)
	var b strings.Builder
	b.WriteString("/* rxeq: what generated C sees (native/internal/cmacros). */\n")
	for _, h := range hdrs {
		fmt.Fprintf(&b, "#include <%s>\n", h)
	}
	fmt.Fprintf(&b, "#include \"%s\"\n", rt.HeaderName)
	return b.String()
}

var defineLine = regexp.MustCompile(`^#define ([A-Za-z_][A-Za-z0-9_]*)`)

// Defined runs the compiler cc (a command and its leading arguments, as in
// $CC) with flags and -dM -E over Probe(rt) and returns the names of the
// macros defined at its end that a program could otherwise keep as C
// identifiers (see Keepable), sorted, each once.
func Defined(ctx context.Context, cc []string, flags []string, rt Runtime) ([]string, error) {
	if len(cc) == 0 {
		return nil, fmt.Errorf("%w: no compiler", ErrProbe)
	}
	dir, err := os.MkdirTemp("", "rxeq-cmacros-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProbe, err)
	}
	defer os.RemoveAll(dir)
	files := append([]runtime.File{{Name: "probe.c", Text: Probe(rt)}}, rt.Files...)
	for _, f := range files {
		if f.Name != filepath.Base(f.Name) {
			return nil, fmt.Errorf("%w: runtime file name %q is not a plain name", ErrProbe, f.Name)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Text), 0o600); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrProbe, err)
		}
	}
	args := append(append(append([]string(nil), cc[1:]...), flags...), "-dM", "-E", "-I", dir, filepath.Join(dir, "probe.c"))
	cmd := exec.CommandContext(ctx, cc[0], args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %w: %s", ErrProbe, cc[0], strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		if m := defineLine.FindStringSubmatch(line); m != nil && Keepable(m[1]) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Keepable reports whether the mangler could keep name but for a
// collision: it does not start with '_' (the implementation's namespace,
// always mangled) nor with "rx_" in any case (rxeq's own, always mangled).
func Keepable(name string) bool {
	return name != "" && name[0] != '_' && !strings.EqualFold(name[:min(3, len(name))], "rx_")
}

// LocalCC is the C compiler command in cc ($CC for the generator and the
// specs, which read it at their edge) split into words, "cc" when empty.
// The error wraps exec.ErrNotFound when it is not installed.
func LocalCC(cc string) ([]string, error) {
	words := strings.Fields(cc)
	if len(words) == 0 {
		words = []string{"cc"}
	}
	if _, err := exec.LookPath(words[0]); err != nil {
		return nil, fmt.Errorf("no C compiler: %w", err)
	}
	return words, nil
}

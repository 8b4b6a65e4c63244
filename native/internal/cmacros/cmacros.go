// Package cmacros finds the preprocessor macros that are defined where
// generated C is compiled: every macro the C compiler predefines and every
// macro the headers of the translation unit define. A program identifier
// spelled like one of them would be replaced by the preprocessor, so the
// native backend's mangler must never keep it. Package native keeps the
// names in a committed, sorted list (cmacros_gen.go, written by
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
)

// ErrProbe is the kind of every error of Defined: the compiler could not be
// run, or it rejected the probe.
var ErrProbe = errors.New("probing the C preprocessor")

// Runtime is the C runtime the generated translation unit includes: the
// header and source texts under the names the generated code includes
// them by. Source may be empty (a runtime built as a separate library,
// whose source the generated code no longer includes).
type Runtime struct {
	HeaderName, Header string
	SourceName, Source string
}

var systemInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>`)

// Probe returns a C file that includes what the generated translation
// unit includes: every system header the runtime's header or source
// includes (sorted, each once), then the runtime header and, when there is
// one, the runtime source. Including the runtime's own system headers
// directly makes the probe a superset of the generated code's view even
// when the source is compiled separately.
func Probe(rt Runtime) string {
	var hdrs []string
	for _, text := range []string{rt.Header, rt.Source} {
		for _, m := range systemInclude.FindAllStringSubmatch(text, -1) {
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
	if rt.Source != "" {
		fmt.Fprintf(&b, "#include \"%s\"\n", rt.SourceName)
	}
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
	files := map[string]string{"probe.c": Probe(rt), rt.HeaderName: rt.Header}
	if rt.Source != "" {
		files[rt.SourceName] = rt.Source
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
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

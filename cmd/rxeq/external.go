package main

import (
	"fmt"
	"strings"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
)

// executorSpecs collects repeated --executor NAME=COMMAND flags.
type executorSpecs []external.Options

func (s *executorSpecs) String() string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, o := range *s {
		parts = append(parts, o.Name+"="+strings.Join(o.Command, " "))
	}
	return strings.Join(parts, " ")
}

// Type names the value in usage lines.
func (s *executorSpecs) Type() string { return "NAME=COMMAND" }

// Set parses one NAME=COMMAND.
func (s *executorSpecs) Set(v string) error {
	o, err := external.ParseSpec(v)
	if err != nil {
		return err
	}
	if builtin.IsBuiltin(executor.Name(o.Name)) {
		return fmt.Errorf("executor name %q is taken by a built-in executor; choose another", o.Name)
	}
	for _, prev := range *s {
		if prev.Name == o.Name {
			return fmt.Errorf("executor %q given twice", o.Name)
		}
	}
	*s = append(*s, o)
	return nil
}

// flags returns the --executor flags that recreate s, quoted for a POSIX
// shell, for the rerun lines of reproducers.
func (s executorSpecs) flags() string {
	var b strings.Builder
	for _, o := range s {
		b.WriteString(" --executor " + shellQuote(o.Name+"="+joinCommand(o.Command)))
	}
	return b.String()
}

// joinCommand joins argv so that external.SplitCommand splits it back.
func joinCommand(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\") {
			parts[i] = a
		} else {
			parts[i] = shellQuote(a)
		}
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// funcMaps collects repeated --executor-func NAME:FUNC=THEIRS flags: the
// name external executor NAME knows program function FUNC by.
type funcMaps []struct{ exec, fn, theirs string }

func (m *funcMaps) String() string { return "" }

// Type names the value in usage lines.
func (m *funcMaps) Type() string { return "NAME:FUNC=THEIRS" }

// Set parses one NAME:FUNC=THEIRS.
func (m *funcMaps) Set(v string) error {
	lhs, theirs, ok := strings.Cut(v, "=")
	exec, fn, ok2 := strings.Cut(lhs, ":")
	if !ok || !ok2 || exec == "" || fn == "" || theirs == "" {
		return fmt.Errorf("%q: want NAME:FUNC=THEIRS, like mine:score2=my_score", v)
	}
	*m = append(*m, struct{ exec, fn, theirs string }{exec, fn, theirs})
	return nil
}

// apply sets each map on its --executor (external.Options.Functions).
func (m funcMaps) apply(specs executorSpecs) error {
	for _, f := range m {
		i := slicesIndex(specs, f.exec)
		if i < 0 {
			return fmt.Errorf("--executor-func %s:%s=%s: no --executor %s", f.exec, f.fn, f.theirs, f.exec)
		}
		if specs[i].Functions == nil {
			specs[i].Functions = map[string]string{}
		}
		specs[i].Functions[f.fn] = f.theirs
	}
	return nil
}

func slicesIndex(specs executorSpecs, name string) int {
	for i, o := range specs {
		if o.Name == name {
			return i
		}
	}
	return -1
}

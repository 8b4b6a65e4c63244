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

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/rextio/rxeq/harness"
)

// builtinExecutors are the names an --executor may not take.
var builtinExecutors = []string{harness.PathOracle, harness.PathFallback, harness.PathNative, "torch"}

// executorSpecs collects repeated --executor NAME=COMMAND flags.
type executorSpecs []harness.ExternalOptions

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
	o, err := harness.ParseExternalSpec(v)
	if err != nil {
		return err
	}
	for _, b := range builtinExecutors {
		if o.Name == b {
			return fmt.Errorf("executor name %q is taken by a built-in executor; choose another", o.Name)
		}
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

// joinCommand joins argv so that harness.SplitCommand splits it back.
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

// start makes an executor of every spec, each call bounded by timeout (0:
// the harness default). close stops their processes.
func (s executorSpecs) start(timeout time.Duration) (execs []harness.Executor, close func(), err error) {
	var made []*harness.ExternalExecutor
	close = func() {
		for _, e := range made {
			_ = e.Close()
		}
	}
	for _, o := range s {
		o.Timeout = timeout
		e, err := harness.NewExternalExecutor(o)
		if err != nil {
			close()
			return nil, func() {}, err
		}
		made = append(made, e)
		execs = append(execs, e)
	}
	return execs, close, nil
}

// closeExecutors stops the processes of the external executors in execs.
func closeExecutors(execs []harness.Executor) {
	for _, e := range execs {
		if x, ok := e.(*harness.ExternalExecutor); ok {
			_ = x.Close()
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// flagSet is one command's flags: a pflag.FlagSet (GNU-style long flags
// with two dashes, which may come before or after the positional
// arguments; `--` ends them) that knows where its usage goes.
type flagSet struct {
	*pflag.FlagSet
	name, args     string // "run", "[flags] [PATH...]"
	stdout, stderr io.Writer
}

// newFlagSet returns the flag set of command name, whose positional
// arguments are described by args in the usage line. Help goes to stdout,
// errors to stderr; parsing never exits the process.
func newFlagSet(name, args string, stdout, stderr io.Writer) *flagSet {
	pf := pflag.NewFlagSet(name, pflag.ContinueOnError)
	// parseFlags prints errors and help itself: pflag would print the
	// usage to one writer for both.
	pf.SetOutput(io.Discard)
	pf.Usage = func() {}
	pf.SortFlags = false // the order the command defines them in
	return &flagSet{FlagSet: pf, name: name, args: args, stdout: stdout, stderr: stderr}
}

// writeUsage writes the usage line and the flags.
func (fs *flagSet) writeUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: rxeq %s %s\n", fs.name, fs.args)
	if fs.HasFlags() {
		fmt.Fprintf(w, "\nflags:\n%s", fs.FlagUsages())
	}
}

// Usage prints the usage to stderr, for a command that rejects its
// arguments after parsing them (and then exits 2).
func (fs *flagSet) Usage() { fs.writeUsage(fs.stderr) }

// parseFlags parses a command's flags, which may come before or after its
// positional arguments (rxeq run f.rx --batch 1). -h and --help print the
// usage on stdout and exit 0; an unknown flag or a bad value prints the
// error, which names the flag, and the usage on stderr and exits 2. ok is
// false when the command must return code at once.
func parseFlags(fs *flagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, pflag.ErrHelp):
		fs.writeUsage(fs.stdout)
		return exitOK, false
	}
	fmt.Fprintf(fs.stderr, "rxeq %s: %v\n", fs.name, err)
	if hint := fs.singleDashHint(args); hint != "" {
		fmt.Fprintf(fs.stderr, "rxeq %s: %s\n", fs.name, hint)
	}
	fs.Usage()
	return exitUsage, false
}

// singleDashHint returns advice for the first argument that is a long flag
// written with one dash (-json, which pflag reads as the short flags -j -s
// -o -n), or "".
func (fs *flagSet) singleDashHint(args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if fs.Lookup(name) != nil {
			return fmt.Sprintf("%s: long flags take two dashes: -%s", a, a)
		}
	}
	return ""
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

// parseFile reads (program.ReadFile: regular files of at most 1 MiB) and
// checks one .rx file. Errors are printed one per line as
// file:line:col: message. With scenario, the file is checked as a scenario
// (program.ParseScenario): check, run and list take files that way, so
// check accepts exactly what run can run; gen and lock need only a
// program.
func parseFile(path string, scenario bool, stderr io.Writer) (*program.File, bool) {
	src, err := program.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		return nil, false
	}
	parse := program.Parse
	if scenario {
		parse = program.ParseScenario
	}
	f, err := parse(path, src)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, false
	}
	return f, true
}

// cmdCheck parses and checks each file as a scenario, with every static rule
// `rxeq run` applies, and prints every error; exit 2 if any does not check.
// A directory is searched for *.rx files, as run, list and lock do, and
// two files with one scenario name are an error (scenarios.Unique).
func cmdCheck(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", "PATH...", stdout, stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	paths, err := scenarios.Expand(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		return exitUsage
	}
	code := exitOK
	var files []*program.File
	for _, path := range paths {
		f, ok := parseFile(path, true, stderr)
		if !ok {
			code = exitUsage
			continue
		}
		files = append(files, f)
		names := make([]string, len(f.Funcs))
		for i, fn := range f.Funcs {
			names[i] = fn.Name
		}
		fmt.Fprintf(stdout, "%s: ok (%s)\n", path, strings.Join(names, ", "))
	}
	if err := scenarios.Unique(files); err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		code = exitUsage
	}
	return code
}

// cmdGen prints the generated C of a file, or of one function of it.
func cmdGen(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gen", "[--func F] FILE", stdout, stderr)
	fn := fs.String("func", "", "print only the C function generated for scoring function `F`")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	files, ok := loadPrograms(fs.Args(), false, stderr)
	if !ok || len(files) != 1 {
		if ok {
			fmt.Fprintf(stderr, "rxeq gen: %s holds %d programs: name one file or catalog scenario\n", fs.Arg(0), len(files))
		}
		return exitUsage
	}
	f := files[0]
	p, err := program.Lower(f)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		return exitUsage
	}
	src, err := native.Generate(p)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		if errors.Is(err, native.ErrUnsupported) {
			return exitFail
		}
		return exitUsage
	}
	if *fn == "" {
		_, _ = stdout.Write(src)
		return exitOK
	}
	if f.Func(*fn) == nil {
		fmt.Fprintf(stderr, "rxeq: %s has no function %s\n", fs.Arg(0), *fn)
		return exitUsage
	}
	def, ok := lock.CFunction(src, native.CFuncName(*fn))
	if !ok {
		fmt.Fprintf(stderr, "rxeq: the generated C has no function %s\n", native.CFuncName(*fn))
		return exitFail
	}
	fmt.Fprintln(stdout, def)
	return exitOK
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
)

// cmdList prints one line per scenario function: its batches and locks.
func cmdList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("list", "[PATH...]", stdout, stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	files, ok := loadPrograms(fs.Args(), true, stderr)
	if !ok {
		return exitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFUNCTION\tBATCHES\tLOCKS\tFILE")
	for _, f := range files {
		batches := make([]string, len(f.Batches))
		for i, b := range f.Batches {
			batches[i] = fmt.Sprint(b)
		}
		if len(batches) == 0 {
			batches = []string{fmt.Sprint(harness.DefaultBatch)}
		}
		for _, fn := range f.Funcs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", f.ScenarioName(), fn.Name, strings.Join(batches, " "), len(fn.Locks), f.Name)
		}
	}
	_ = tw.Flush()
	return exitOK
}

// cmdLock runs the source-lock checks only: generate C, check each
// function's locks, print every failure. No compiler is needed.
func cmdLock(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("lock", "[PATH...]", stdout, stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	files, ok := loadPrograms(fs.Args(), false, stderr)
	if !ok {
		return exitUsage
	}
	code := exitOK
	for _, f := range files {
		p, err := program.Lower(f)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq lock: %s: %v\n", f.Name, err)
			return exitUsage
		}
		src, err := native.Generate(p)
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %s: generating C: %v\n", f.Name, err)
			code = exitFail
			continue
		}
		for _, fn := range f.Funcs {
			if len(fn.Locks) == 0 {
				continue
			}
			res := lock.Check(src, native.CFuncName(fn.Name), fn.Locks)
			if res.OK {
				fmt.Fprintf(stdout, "PASS %s/%s: %d checks\n", f.ScenarioName(), fn.Name, len(fn.Locks))
				continue
			}
			code = exitFail
			fmt.Fprintf(stdout, "FAIL %s/%s\n%s\n", f.ScenarioName(), fn.Name, indent(res.Message))
		}
	}
	return code
}

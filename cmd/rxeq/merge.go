package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rextio/rxeq/reports"
)

// cmdMerge joins the JSON reports of the shards of one run into one JSON
// and one JUnit report whose counts are the unsharded run's.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("merge", "[--json FILE] [--junit FILE] REPORT.json...", stdout, stderr)
	jsonOut := fs.String("json", "", "write the merged JSON report to `FILE`")
	junitOut := fs.String("junit", "", "write the merged JUnit XML report to `FILE`")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	// Two passes over the reports, one case at a time: the first checks
	// them and counts what the outputs' headers need, the second writes
	// the outputs group by group in the run's order. Memory is that of
	// one case, the locks and a few bytes per group, never the merged
	// report.
	srcs := make([]reports.Source, fs.NArg())
	for i, name := range fs.Args() {
		srcs[i] = reports.FileSource(name)
	}
	plan, err := reports.PlanMerge(ctx, srcs...)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq merge: %v\n", err)
		return exitUsage
	}
	var files []*os.File
	closeAll := func() error {
		var first error
		for _, f := range files {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
		files = nil
		return first
	}
	create := func(path string) (io.Writer, error) {
		if path == "" {
			return nil, nil
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return f, nil
	}
	jsonW, err := create(*jsonOut)
	var junitW io.Writer
	if err == nil {
		junitW, err = create(*junitOut)
	}
	if err == nil {
		err = plan.Write(ctx, jsonW, junitW)
	}
	if cerr := closeAll(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "rxeq merge: %v\n", err)
		return exitFail
	}
	sum := plan.Summary()
	pass, fail, skip := sum.Passed, sum.Failed+sum.Locks-sum.LocksHeld, sum.Skipped
	fmt.Fprintf(stdout, "%d reports, %d cases, locks %d/%d held\n", fs.NArg(), sum.Cases, sum.LocksHeld, sum.Locks)
	if skip > 0 {
		fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", pass, fail, skip)
	} else {
		fmt.Fprintf(stdout, "%d passed, %d failed\n", pass, fail)
	}
	if fail > 0 {
		return exitFail
	}
	return exitOK
}

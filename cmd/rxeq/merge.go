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
func cmdMerge(_ context.Context, args []string, stdout, stderr io.Writer) int {
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
	// Each report is decoded case by case into the merged one: the
	// merge holds the merged report, not the inputs besides.
	var m reports.Merger
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq merge: %v\n", err)
			return exitUsage
		}
		err = m.ReadJSON(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "rxeq merge: %s: %v\n", name, err)
			return exitUsage
		}
	}
	merged, err := m.Report()
	if err != nil {
		fmt.Fprintf(stderr, "rxeq merge: %v\n", err)
		return exitUsage
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer, *reports.Report) error
	}{{*jsonOut, reports.WriteJSON}, {*junitOut, reports.WriteJUnit}} {
		if out.path == "" {
			continue
		}
		f, err := os.Create(out.path)
		if err == nil {
			err = out.write(f, merged)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "rxeq merge: %v\n", err)
			return exitFail
		}
	}
	pass, fail, skip := 0, 0, 0
	for _, c := range merged.Cases {
		switch c.Status {
		case reports.StatusPass, reports.StatusXPass:
			pass++
		case reports.StatusSkip, reports.StatusXFail:
			skip++
		default:
			fail++
		}
	}
	locksOK := 0
	for _, l := range merged.Locks {
		if l.Status == reports.StatusPass {
			locksOK++
		} else {
			fail++
		}
	}
	fmt.Fprintf(stdout, "%d reports, %d cases, locks %d/%d held\n", fs.NArg(), len(merged.Cases), locksOK, len(merged.Locks))
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

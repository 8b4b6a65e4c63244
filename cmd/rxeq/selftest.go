package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/selftest"
)

// cmdSelftest runs the catalog (or the given files) through deliberately
// wrong executors and fails unless the comparison reports every one.
func cmdSelftest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("selftest", "[flags] [PATH...]", stdout, stderr)
	batches := fs.String("batch", "", "comma-separated batch sizes replacing each scenario's //rx:batches")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var opts selftest.Options
	for _, b := range splitList(*batches) {
		n, err := strconv.Atoi(b)
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "rxeq selftest: --batch %q: want positive integers, like --batch 1,16\n", *batches)
			return exitUsage
		}
		opts.Harness.Batches = append(opts.Harness.Batches, n)
	}
	files, ok := loadPrograms(fs.Args(), true, stderr)
	if !ok {
		return exitUsage
	}
	outs, err := selftest.Run(ctx, files, opts)
	if outs == nil {
		fmt.Fprintf(stderr, "rxeq selftest: %v\n", err)
		return exitFail
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tBROKE\tFLAGGED\tVERDICT\tWHAT")
	caught := 0
	for _, o := range outs {
		if o.Verdict == selftest.Caught {
			caught++
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", o.Mutant.Name, o.Broken, o.Flagged, o.Verdict, o.Mutant.What)
	}
	tw.Flush()
	for _, o := range outs {
		if o.Example != "" {
			fmt.Fprintf(stdout, "  %s: %s\n", o.Mutant.Name, o.Example)
		}
	}
	fmt.Fprintf(stdout, "\n%d passed, %d failed\n", caught, len(outs)-caught)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq selftest: %v\n", err)
		if errors.Is(err, harness.ErrOptions) {
			return exitUsage
		}
		return exitFail
	}
	return exitOK
}

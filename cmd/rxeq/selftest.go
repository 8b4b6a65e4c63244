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
//
// On the catalog every mutant must be exercised. On a user's files a
// mutant they give nothing to break (wrong-error-text in files without a
// runtime error) is reported as not exercised but fails only under
// --strict; files that already fail through the unbroken interpreter are
// an error (every mutant would look caught).
func cmdSelftest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("selftest", "[flags] [PATH...]", stdout, stderr)
	batches := fs.String("batch", "", "comma-separated batch sizes replacing each scenario's //rx:batches")
	skip := fs.String("skip", "", "comma-separated mutants to leave out, e.g. wrong-error-text")
	strict := fs.Bool("strict", false, "with PATHs, fail when the files give a mutant nothing to break (always so on the built-in catalog)")
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
	muts, err := selftest.Select(splitList(*skip))
	if err != nil {
		fmt.Fprintf(stderr, "rxeq selftest: --skip: %v\n", err)
		return exitUsage
	}
	if len(muts) == 0 {
		fmt.Fprintf(stderr, "rxeq selftest: --skip %q leaves no mutant to run\n", *skip)
		return exitUsage
	}
	opts.Mutants = muts
	opts.AllowNotExercised = fs.NArg() > 0 && !*strict
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
	caught, idle := 0, 0
	for _, o := range outs {
		switch o.Verdict {
		case selftest.Caught:
			caught++
		case selftest.NotExercised:
			idle++
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", o.Mutant.Name, o.Broken, o.Flagged, o.Verdict, o.Mutant.What)
	}
	tw.Flush()
	for _, o := range outs {
		if o.Example != "" {
			fmt.Fprintf(stdout, "  %s: %s\n", o.Mutant.Name, o.Example)
		}
	}
	switch {
	case idle > 0 && opts.AllowNotExercised:
		fmt.Fprintf(stdout, "\n%d caught, %d escaped, %d not exercised (your files give them nothing to break; not a failure without --strict)\n",
			caught, len(outs)-caught-idle, idle)
	case idle > 0:
		fmt.Fprintf(stdout, "\n%d caught, %d escaped, %d not exercised\n", caught, len(outs)-caught-idle, idle)
	default:
		fmt.Fprintf(stdout, "\n%d caught, %d escaped\n", caught, len(outs)-caught)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rxeq selftest: %v\n", err)
		if errors.Is(err, harness.ErrOptions) {
			return exitUsage
		}
		return exitFail
	}
	return exitOK
}

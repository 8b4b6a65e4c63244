package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/selftest"
)

// cmdSelftest runs the catalog (or the given files) through deliberately
// wrong executors and fails unless the comparison reports every one; then
// it runs the built-in canaries, one case per rule of the judgement
// (selftest.Rules), and fails naming each rule whose canary was not
// flagged. The external-executor canaries start this binary again as
// `rxeq selftest-executor`.
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
	noCanaries := fs.Bool("no-canaries", false, "run the mutants only, not the canaries of the judgement's rules")
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
	code := exitOK
	if err != nil {
		fmt.Fprintf(stderr, "rxeq selftest: %v\n", err)
		if errors.Is(err, harness.ErrOptions) {
			return exitUsage
		}
		code = exitFail
	}
	if !*noCanaries && !runCanaries(ctx, stdout, stderr) {
		code = exitFail
	}
	return code
}

// runCanaries runs the judgement's canaries, prints one line per canary
// and the rules covered, and reports whether every canary was flagged.
func runCanaries(ctx context.Context, stdout, stderr io.Writer) bool {
	var hostile []string
	if exe, err := os.Executable(); err == nil {
		hostile = []string{exe, selftest.HostileArg}
	} else {
		fmt.Fprintf(stderr, "rxeq selftest: cannot find this binary to start the hostile executor: %v\n", err)
	}
	outs, err := selftest.RunCanaries(ctx, selftest.CanaryOptions{Hostile: hostile})
	if outs == nil {
		fmt.Fprintf(stderr, "rxeq selftest: %v\n", err)
		return false
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tCANARY\tVERDICT\tWHAT")
	flagged, runner := 0, 0
	covered := map[string]bool{}
	for _, o := range outs {
		if o.Verdict == selftest.Flagged {
			flagged++
			covered[o.Canary.Rule] = true
		}
		if o.Runner {
			runner++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Canary.Rule, o.Canary.Name, o.Verdict, o.Canary.What)
	}
	tw.Flush()
	for _, o := range outs {
		if o.Verdict != selftest.Flagged {
			fmt.Fprintf(stdout, "  %s %s: %s\n", o.Canary.Rule, o.Verdict, o.Report)
		}
	}
	rules := selftest.Rules()
	fmt.Fprintf(stdout, "\nrules covered: %d of %d (%d of %d canaries flagged; %d of them by rxeq run's runner too)\n", len(covered), len(rules), flagged, len(outs), runner)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq selftest: %v\n", err)
		return false
	}
	return true
}

// cmdSelftestExecutor is the hidden `rxeq selftest-executor --misbehave
// KIND`: the hostile external executor of selftest.ServeHostile on stdin
// and stdout, which `rxeq selftest`'s external canaries start. Not meant
// to be run by hand.
func cmdSelftestExecutor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(selftest.HostileArg, "--misbehave KIND (started by rxeq selftest)", stdout, stderr)
	kind := fs.String("misbehave", "ok", "how to break the protocol's contract (ok behaves)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "rxeq %s: takes no arguments (it is started by rxeq selftest)\n", selftest.HostileArg)
		return exitUsage
	}
	if err := selftest.ServeHostile(ctx, os.Stdin, stdout, *kind); err != nil {
		fmt.Fprintf(stderr, "rxeq %s: %v\n", selftest.HostileArg, err)
		if errors.Is(err, selftest.ErrUnknownMisbehaviour) {
			return exitUsage
		}
		return exitFail
	}
	return exitOK
}

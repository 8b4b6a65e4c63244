package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/sweep"
	"github.com/rextio/rxeq/tensor"
)

// cmdSweep is `rxeq sweep --backend NAME [flags] FILE`: one executor (the
// code under test) against the oracle on many seeds and edge kinds, the
// first failing input shrunk and written where `rxeq run --inputs` finds
// it.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", "--backend NAME [flags] FILE", stdout, stderr)
	backend := fs.String("backend", "", "the one executor to sweep: fallback, native, torch or an --executor name (required)")
	var external executorSpecs
	fs.Var(&external, "executor", "define an external executor `NAME=COMMAND` speaking rxeq.executor/v1, to name in --backend")
	var funcMap funcMaps
	fs.Var(&funcMap, "executor-func", "external executor NAME knows function FUNC as THEIRS: `NAME:FUNC=THEIRS` (repeatable)")
	fn := fs.String("func", "", "sweep only function `F` (default: every function of FILE, in order)")
	seeds := fs.Int("seeds", sweep.DefaultSeeds, "input sets drawn per batch")
	edges := fs.String("edges", strings.Join(tensor.EdgeKinds, ","), "edge kinds every float input is also drawn from, in turn with the file's own distributions (none: the file's alone)")
	batches := fs.String("batch", "", "comma-separated batch sizes replacing the file's //rx:batches")
	maxULP := fs.Int64("max-ulp", 0, "also fail a float output more than `N` float32 ULPs from the oracle (as rxeq run --max-ulp)")
	kinds := fs.Bool("error-kinds", false, "compare runtime errors by kind only (division by zero, shape, dtype), not by rxeq's text")
	maxShrink := fs.Int("max-shrink", sweep.DefaultMaxShrink, "most runs spent shrinking a failing input")
	out := fs.String("out", "rxeq-sweep", "directory the shrunk inputs are written to, as .npy files `rxeq run --inputs DIR` reads")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || *backend == "" || *seeds <= 0 || *maxULP < 0 || *maxShrink <= 0 {
		fs.Usage()
		return exitUsage
	}
	opts := sweep.Options{Seeds: *seeds, MaxULP: *maxULP, ErrorKinds: *kinds, MaxShrink: *maxShrink, Edges: []string{}}
	if *edges != "none" {
		for _, e := range splitList(*edges) {
			if !slices.Contains(tensor.EdgeKinds, e) {
				fmt.Fprintf(stderr, "rxeq sweep: --edges: unknown edge kind %q (want %s, or none)\n", e, strings.Join(tensor.EdgeKinds, ", "))
				return exitUsage
			}
			opts.Edges = append(opts.Edges, e)
		}
	}
	for _, b := range splitList(*batches) {
		n, err := strconv.Atoi(b)
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "rxeq sweep: --batch %q: want positive integers, like --batch 1,16\n", *batches)
			return exitUsage
		}
		opts.Batches = append(opts.Batches, n)
	}
	files, ok := loadPrograms(fs.Args(), true, stderr)
	if !ok {
		return exitUsage
	}
	if len(files) != 1 {
		fmt.Fprintf(stderr, "rxeq sweep: %s holds %d scenarios: name one file\n", fs.Arg(0), len(files))
		return exitUsage
	}
	f := files[0]
	var funcs []string
	for _, g := range f.Funcs {
		if *fn == "" || g.Name == *fn {
			funcs = append(funcs, g.Name)
		}
	}
	if len(funcs) == 0 {
		fmt.Fprintf(stderr, "rxeq sweep: %s has no function %s\n", fs.Arg(0), *fn)
		return exitUsage
	}
	if err := funcMap.apply(external); err != nil {
		fmt.Fprintf(stderr, "rxeq sweep: %v\n", err)
		return exitUsage
	}
	// ONNX Runtime runs in a worker process, as under rxeq run: a crash of
	// it fails a seed, not the sweep.
	sel, err := builtin.Select([]executor.Name{executor.Name(*backend)}, builtin.Config{IsolateORT: true}.FromEnv(os.Getenv), external)
	if err == nil && len(sel.Unavailable) > 0 {
		err = fmt.Errorf("executor %s: %s", sel.Unavailable[0].Executor, sel.Unavailable[0].Reason)
	}
	if err == nil && len(sel.Executors) != 1 {
		err = fmt.Errorf("--backend %q: name one executor besides the oracle", *backend)
	}
	if err != nil {
		sel.Close()
		fmt.Fprintf(stderr, "rxeq sweep: %v\n", err)
		return exitUsage
	}
	defer sel.Close()
	e := sel.Executors[0]
	edgeNote := "the file's distributions"
	if len(opts.Edges) > 0 {
		edgeNote += " and edge(" + strings.Join(opts.Edges, "|") + ")"
	}
	for _, name := range funcs {
		res, err := sweep.Run(ctx, f, name, e, opts)
		if err != nil && (res == nil || res.Failure == nil) {
			fmt.Fprintf(stderr, "rxeq sweep: %s: %v\n", name, err)
			if errors.Is(err, sweep.ErrSweep) {
				return exitUsage
			}
			return exitFail
		}
		if res.Failure == nil {
			excused := ""
			if res.Excused > 0 {
				excused = fmt.Sprintf("; %d excused as float32 limits", res.Excused)
			}
			fmt.Fprintf(stdout, "PASS %s/%s through %s: %d cases (%d seeds, %s)%s\n", f.ScenarioName(), name, e.Name(), res.Runs, opts.Seeds, edgeNote, excused)
			continue
		}
		fl := res.Failure
		fmt.Fprintf(stdout, "FAIL %s/%s/b%d through %s: seed %d, inputs from %s, after %d cases:\n%s\n",
			f.ScenarioName(), name, fl.Batch, e.Name(), fl.Seed, fl.Dists, res.Runs, indent(fl.Original))
		fmt.Fprintf(stdout, "shrunk in %d runs to %d row(s):\n", fl.Shrinks, fl.Rows)
		for _, prm := range f.Func(name).Params {
			if t := fl.Inputs[prm.Name]; t != nil {
				fmt.Fprintf(stdout, "    %s %v = %s\n", prm.Name, t.Shape, values(t))
			}
		}
		fmt.Fprintf(stdout, "%s\n", indent(fl.Report))
		paths, werr := sweep.WriteInputs(*out, f, fl)
		if werr != nil {
			fmt.Fprintf(stderr, "rxeq sweep: writing the inputs: %v\n", werr)
			return exitFail
		}
		fmt.Fprintf(stdout, "wrote %s\nreplay: rxeq run --inputs %s --backend %s%s %s\n", strings.Join(paths, ", "), *out, e.Name(), external.flags(), fs.Arg(0))
		return exitFail
	}
	return exitOK
}

// values prints a small tensor's elements (the first 64 of a large one).
func values(t *tensor.Tensor) string {
	switch {
	case t.DType == tensor.Int64:
		return fmt.Sprint(t.I64)
	case len(t.F32) <= 64:
		return fmt.Sprint(t.F32)
	default:
		return fmt.Sprint(t.F32[:64]) + " …"
	}
}

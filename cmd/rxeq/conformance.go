package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/onnx/conformance"
)

// cmdConformance runs a conformance suite: `rxeq conformance onnx` imports
// ONNX's node tests (Debian's libonnx-testdata) and holds the oracle and
// the other executors to their expected outputs. Exit 0 when every
// imported test agrees for every executor, 1 when one does not, 2 on bad
// usage or when the tests are not installed.
func cmdConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("conformance", "onnx [--root DIR] [--backend LIST]", stdout, stderr)
	root := fs.String("root", conformance.DefaultRoot, "the directory of ONNX's node tests (`DIR`/test_*/model.onnx)")
	backends := fs.String("backend", "", "comma-separated executors to run besides the oracle (default: fallback, native, torch where available)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || fs.Arg(0) != "onnx" {
		fs.Usage()
		return exitUsage
	}
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "rxeq conformance: %s: no ONNX node tests there; install them with apt-get install libonnx-testdata (ci/setup.sh does), or name their directory with --root\n", *root)
		return exitUsage
	}
	var names []executor.Name
	if *backends != "" {
		names = builtin.ParseNames(*backends)
	}
	cfg := builtin.Config{}.FromEnv(os.Getenv)
	sel, err := builtin.Select(names, cfg, nil)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq conformance: %v\n", err)
		return exitUsage
	}
	defer sel.Close()
	for _, u := range sel.Unavailable {
		fmt.Fprintf(stdout, "%s: unavailable: %s\n", u.Executor, u.Reason)
	}
	execs := append([]executor.Executor{sel.Reference}, sel.Executors...)
	r, err := conformance.Run(ctx, *root, execs)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq conformance: %v\n", err)
		return exitFail
	}
	r.Write(stdout)
	if len(r.Failures) > 0 {
		return exitFail
	}
	return exitOK
}

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rextio/rxeq/isolate"
)

// cmdWorker is the hidden `rxeq worker`: it serves package isolate's
// worker protocol on stdin and stdout, for `rxeq run --isolate` (and the
// fuzzer), which start it as a subprocess. It is not meant to be run by
// hand and takes no arguments.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("worker", "(started by rxeq run --isolate; takes no arguments)", stdout, stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "rxeq worker: takes no arguments (it is started by rxeq run --isolate)")
		return exitUsage
	}
	if err := isolate.ServeStdio(ctx); err != nil {
		fmt.Fprintf(stderr, "rxeq worker: %v\n", err)
		return exitFail
	}
	return exitOK
}

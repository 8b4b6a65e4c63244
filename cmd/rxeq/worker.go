package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"

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
	if os.Getenv("GOMAXPROCS") == "" {
		// A worker serves one request at a time (a pool keeps one per
		// goroutine of rxeq); with one P its runtime does not spin
		// threads looking for work after every wakeup of the exchange.
		// Measured with rxeq fuzz and both ONNX Runtime executors, three
		// runs each: 20.0–21.0 programs/s before, 21.2–21.4 after.
		runtime.GOMAXPROCS(1)
	}
	if err := isolate.ServeStdio(ctx); err != nil {
		fmt.Fprintf(stderr, "rxeq worker: %v\n", err)
		return exitFail
	}
	return exitOK
}

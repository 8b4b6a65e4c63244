package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/onnx/conformance"
	"github.com/rextio/rxeq/onnx/ort"
)

// conformanceExecutors are the executors `rxeq conformance` runs besides
// the oracle when --backend is not given: the default ones, ONNX
// Runtime's two and the generated Python ones (PyTorch eager,
// TorchScript, NumPy), each where it can run (the others are listed as
// unavailable).
var conformanceExecutors = append(builtin.DefaultNames(), executor.ONNXRuntime, executor.ONNXRuntimeNoOpt,
	executor.PyTorch, executor.TorchScript, executor.NumPy)

// envRequireORT, when set, makes an unavailable ONNX Runtime executor an
// error of `rxeq conformance` (exit 2) instead of a line of its report:
// CI sets it where ci/setup.sh installed the library.
const envRequireORT = "RXEQ_REQUIRE_ORT"

// cmdConformance runs a conformance suite: `rxeq conformance onnx` imports
// ONNX's node tests (Debian's libonnx-testdata) and holds the oracle and
// the other executors to their expected outputs. Exit 0 when every
// imported test agrees for every executor, 1 when one does not, 2 on bad
// usage or when the tests are not installed.
func cmdConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("conformance", "onnx [--root DIR] [--backend LIST]", stdout, stderr)
	root := fs.String("root", conformance.DefaultRoot, "the directory of ONNX's node tests (`DIR`/test_*/model.onnx)")
	backends := fs.String("backend", "", "comma-separated executors to run besides the oracle (default: fallback, native, torch, onnxruntime, onnxruntime-noopt, pytorch, torchscript, numpy where available)")
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
	names := conformanceExecutors
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
		if os.Getenv(envRequireORT) != "" && (u.Executor == executor.ONNXRuntime || u.Executor == executor.ONNXRuntimeNoOpt) {
			fmt.Fprintf(stderr, "rxeq conformance: %s is required (%s is set) but unavailable: %s\n", u.Executor, envRequireORT, u.Reason)
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s: unavailable: %s\n", u.Executor, u.Reason)
	}
	execs := append([]executor.Executor{sel.Reference}, sel.Executors...)
	r, err := conformance.Run(ctx, *root, execs)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq conformance: %v\n", err)
		return exitFail
	}
	r.Write(stdout)
	// ONNX Runtime also runs ONNX's own models, the ones rxeq cannot
	// import included: what it computes differently is reported, and is
	// ONNX Runtime's (or the test data's), not a failure of rxeq's.
	for _, e := range sel.Executors {
		level := ort.Optimize
		switch e.Name() {
		case executor.ONNXRuntime:
		case executor.ONNXRuntimeNoOpt:
			level = ort.NoOptimize
		default:
			continue
		}
		lib, err := ort.Find(cfg.ORTLib)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq conformance: %v\n", err)
			return exitFail
		}
		mr, err := conformance.RunModels(ctx, *root, lib, level, string(e.Name()))
		if err != nil {
			fmt.Fprintf(stderr, "rxeq conformance: %v\n", err)
			return exitFail
		}
		mr.Write(stdout)
	}
	if len(r.Failures) > 0 {
		return exitFail
	}
	return exitOK
}

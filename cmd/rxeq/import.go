package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/tensor/npy"
)

// maxModelSize is the largest model file import reads (protobuf's own
// limit is 2 GiB).
const maxModelSize = 2 << 30

// cmdImport turns an ONNX model into an .rx program (to stdout or -o), and
// writes its initializers as DIR/NAME.npy for `rxeq run --inputs DIR`.
// Exit 2 on bad usage, 1 when the model cannot be imported; nothing is
// written then.
func cmdImport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("import", "[--func NAME] [-o OUT.rx] [--weights DIR] MODEL.onnx", stdout, stderr)
	fn := fs.String("func", "", "name the scoring function `NAME` (default: the graph's name)")
	out := fs.StringP("output", "o", "", "write the program to `OUT.rx` (default stdout)")
	weights := fs.String("weights", "", "write the model's initializers as .npy files into `DIR`, the layout rxeq run --inputs reads")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	path := fs.Arg(0)
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "rxeq import: %v\n", err)
		return exitUsage
	case !fi.Mode().IsRegular():
		fmt.Fprintf(stderr, "rxeq import: %s is not a regular file\n", path)
		return exitUsage
	case fi.Size() > maxModelSize:
		fmt.Fprintf(stderr, "rxeq import: %s holds %d bytes, more than an ONNX model can (2 GiB)\n", path, fi.Size())
		return exitUsage
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq import: %v\n", err)
		return exitUsage
	}
	imp, err := onnx.Import(b, onnx.ImportOptions{Func: *fn, Source: filepath.Base(path), WeightsDir: *weights})
	if err != nil {
		fmt.Fprintf(stderr, "rxeq import: %s: %v\n", path, err)
		var ie *onnx.ImportError
		if errors.As(err, &ie) && ie.Class == onnx.ClassModel && strings.HasPrefix(ie.Msg, "function name") {
			return exitUsage
		}
		return exitFail
	}
	if len(imp.Weights) > 0 && *weights == "" {
		names := make([]string, 0, len(imp.Weights))
		for n := range imp.Weights {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(stderr, "rxeq import: %s has %d weights (%s): name a directory for their .npy files with --weights DIR\n",
			path, len(names), strings.Join(names, ", "))
		return exitUsage
	}
	if len(imp.Weights) > 0 {
		if err := os.MkdirAll(*weights, 0o755); err != nil {
			fmt.Fprintf(stderr, "rxeq import: %v\n", err)
			return exitFail
		}
		names := make([]string, 0, len(imp.Weights))
		for n := range imp.Weights {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := npy.WriteFile(filepath.Join(*weights, n+".npy"), imp.Weights[n]); err != nil {
				fmt.Fprintf(stderr, "rxeq import: %v\n", err)
				return exitFail
			}
		}
	}
	if *out == "" {
		_, _ = stdout.Write(imp.Source)
		return exitOK
	}
	if err := os.WriteFile(*out, imp.Source, 0o644); err != nil {
		fmt.Fprintf(stderr, "rxeq import: %v\n", err)
		return exitFail
	}
	return exitOK
}

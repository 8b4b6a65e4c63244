package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/pyexport"
)

// exportRequest is what an export format is given: one checked program,
// its lowered IR, the functions to export (every function of the file
// when --func is not given) and where it came from, for the header every
// exported artifact carries.
type exportRequest struct {
	File    *program.File
	IR      *ir.Program
	Funcs   []string
	Source  string // the file's path as the user named it (or the catalog scenario)
	Version string // rxeq's version
}

// exportedFile is one artifact an export writes: a file name (no
// directories) and its bytes.
type exportedFile struct {
	Name string
	Data []byte
}

// exportFormat turns a program into the artifacts of one framework.
type exportFormat struct {
	// help is the one line `rxeq export -h` shows for the format.
	help string
	// write returns the artifacts, deterministically: the same program
	// gives the same bytes.
	write func(req exportRequest) ([]exportedFile, error)
}

// exportFormats returns the formats `rxeq export --format` accepts, by
// name. Each framework's package adds one line here.
func exportFormats() map[string]exportFormat {
	return map[string]exportFormat{
		"onnx":  {help: "one ONNX model (IR 8, opset 17) per function, F.onnx", write: exportONNX},
		"torch": {help: "one PyTorch module (eager and TorchScript) for the functions, FILE_torch.py", write: exportPython(pyexport.Torch)},
		"numpy": {help: "one NumPy module (float32) for the functions, FILE_numpy.py", write: exportPython(pyexport.NumPy)},
		"tfjs":  {help: "one TensorFlow.js CommonJS module for the functions, FILE_tfjs.js", write: exportTFJS},
	}
}

// cmdExport writes a program in a framework's own form: --format names it;
// with one artifact (one function, or a format that writes one module for
// every function) it goes to stdout or to -o FILE; with several, -o names
// a directory that is created if needed.
func cmdExport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	formats := exportFormats()
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	fs := newFlagSet("export", "--format FORMAT [--func F] [-o OUT] FILE", stdout, stderr)
	format := fs.String("format", "", "the `FORMAT` to write: "+strings.Join(names, ", "))
	fn := fs.String("func", "", "export only scoring function `F`")
	out := fs.StringP("output", "o", "", "write to `OUT` (a file, or a directory when the export has several files); default stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || *format == "" {
		fs.Usage()
		return exitUsage
	}
	ef, ok := formats[*format]
	if !ok {
		fmt.Fprintf(stderr, "rxeq export: unknown format %q (formats: %s)\n", *format, strings.Join(names, ", "))
		return exitUsage
	}
	files, ok := loadPrograms(fs.Args(), false, stderr)
	if !ok || len(files) != 1 {
		if ok {
			fmt.Fprintf(stderr, "rxeq export: %s holds %d programs: name one file or catalog scenario\n", fs.Arg(0), len(files))
		}
		return exitUsage
	}
	f := files[0]
	p, err := program.Lower(f)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		return exitUsage
	}
	var funcs []string
	for _, d := range f.Funcs {
		funcs = append(funcs, d.Name)
	}
	if *fn != "" {
		if !slices.Contains(funcs, *fn) {
			fmt.Fprintf(stderr, "rxeq export: %s has no function %s (functions: %s)\n", fs.Arg(0), *fn, strings.Join(funcs, ", "))
			return exitUsage
		}
		funcs = []string{*fn}
	}
	arts, err := ef.write(exportRequest{File: f, IR: p, Funcs: funcs, Source: fs.Arg(0), Version: version})
	if err != nil {
		fmt.Fprintf(stderr, "rxeq export: %v\n", err)
		return exitFail
	}
	return writeExport(arts, *out, stdout, stderr)
}

// writeExport writes the artifacts to stdout, to one file or into a
// directory.
func writeExport(arts []exportedFile, out string, stdout, stderr io.Writer) int {
	switch {
	case len(arts) == 1 && out == "":
		_, _ = stdout.Write(arts[0].Data)
		return exitOK
	case len(arts) == 1:
		if fi, err := os.Stat(out); err == nil && fi.IsDir() {
			out = filepath.Join(out, arts[0].Name)
		}
		if err := os.WriteFile(out, arts[0].Data, 0o644); err != nil {
			fmt.Fprintf(stderr, "rxeq export: %v\n", err)
			return exitFail
		}
		return exitOK
	case out == "":
		fmt.Fprintf(stderr, "rxeq export: %d files to write: name a directory with -o, or one function with --func\n", len(arts))
		return exitUsage
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintf(stderr, "rxeq export: %v\n", err)
		return exitFail
	}
	for _, a := range arts {
		if err := os.WriteFile(filepath.Join(out, a.Name), a.Data, 0o644); err != nil {
			fmt.Fprintf(stderr, "rxeq export: %v\n", err)
			return exitFail
		}
	}
	return exitOK
}

package pyexport

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// serveScript is the Python side of the generated-code executors: it
// speaks rxeq.executor/v1 and runs the module each prepare carries.
//
//go:embed serve.py
var serveScript string

// serveEnv carries serveScript to the interpreter, which serveBootstrap
// runs.
const (
	serveEnv       = "RXEQ_SERVE_PY"
	serveBootstrap = `import os; exec(compile(os.environ.pop("RXEQ_SERVE_PY"), "rxeq-serve.py", "exec"))`
)

// DefaultPython is the interpreter of the generated-code executors when
// none is named: Debian's, which python3-torch and python3-numpy install
// into (a python3 first on PATH, from pyenv or a virtualenv, may lack them).
const DefaultPython = "/usr/bin/python3"

// ErrUnavailable is wrapped by Available's error: the interpreter cannot
// run, or cannot import the framework.
var ErrUnavailable = errors.New("unavailable")

// ExecutorOptions configure a generated-code executor.
type ExecutorOptions struct {
	// Python is the interpreter ("": DefaultPython).
	Python string
	// Timeout bounds one prepare or run (0: external.DefaultTimeout).
	Timeout time.Duration
	// StartTimeout bounds starting the interpreter until its hello (0:
	// external.Options' default, Timeout when that is shorter than
	// external.DefaultStartTimeout).
	StartTimeout time.Duration
	// Version is rxeq's version, written into the modules' headers.
	Version string
}

// FormatOf returns the export format an executor runs: Torch for pytorch
// and torchscript, NumPy for numpy; ok is false for any other name.
func FormatOf(name executor.Name) (Format, bool) {
	switch name {
	case executor.PyTorch, executor.TorchScript:
		return Torch, true
	case executor.NumPy:
		return NumPy, true
	}
	return "", false
}

// NewExecutor returns the executor name (executor.PyTorch,
// executor.TorchScript or executor.NumPy): one long-lived Python process,
// started by the first Prepare, that receives each program exported by
// Export in the prepare message (nothing is written to disk) and runs its
// functions: eagerly, through torch.jit.script, or with NumPy, on one
// intra-op thread. It is an external executor in every other respect
// (crashes and hangs fail one case and restart the process; errors come
// back with rxeq's texts). Close it when done.
func NewExecutor(name executor.Name, opts ExecutorOptions) (*external.Executor, error) {
	format, ok := FormatOf(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a generated-code executor (want pytorch, torchscript or numpy)", executor.ErrOptions, name)
	}
	python := opts.Python
	if python == "" {
		python = DefaultPython
	}
	version := opts.Version
	return external.New(external.Options{
		Name: string(name),
		// The server's text travels in the environment, so that the
		// command rxeq shows in messages stays one line.
		Command: []string{python, "-c", serveBootstrap, string(name)},
		Env: []string{"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1",
			"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8", serveEnv + "=" + serveScript},
		Timeout:      opts.Timeout,
		StartTimeout: opts.StartTimeout,
		Generate: func(f *program.File, p *ir.Program) (*external.Module, error) {
			m, err := Export(p, Options{Format: format, Source: f.Name, Version: version})
			if err != nil {
				return nil, err
			}
			return &external.Module{Format: string(format), Source: string(m.Source), Functions: m.Names}, nil
		},
	})
}

var availability sync.Map // "python\x00module" -> error (nil: available)

// Available reports whether executor name can run with the interpreter
// python ("": DefaultPython): nil, or an error wrapping ErrUnavailable
// that says what is missing and how to get it. The answer is cached per
// interpreter and module for the life of the process.
func Available(name executor.Name, python string) error {
	format, ok := FormatOf(name)
	if !ok {
		return fmt.Errorf("%w: %q is not a generated-code executor", executor.ErrOptions, name)
	}
	if python == "" {
		python = DefaultPython
	}
	module, pkg := "numpy", "python3-numpy"
	if format == Torch {
		module, pkg = "torch", "python3-torch"
	}
	key := python + "\x00" + module
	if v, ok := availability.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	err := probe(name, python, module, pkg)
	availability.Store(key, err)
	return err
}

func probe(name executor.Name, python, module, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", "import numpy, "+module)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return fmt.Errorf("%s is %w: cannot run %s (%v); install Debian's python3 and %s, or set RXEQ_PYTHON to a Python that has %s",
				name, ErrUnavailable, python, err, pkg, module)
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Errorf("%s is %w: %s cannot import %s (%s); install Debian's %s, or set RXEQ_PYTHON to a Python that has it",
			name, ErrUnavailable, python, module, strings.TrimSpace(lines[len(lines)-1]), pkg)
	}
	return nil
}

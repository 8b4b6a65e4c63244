package native

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native/runtime"
)

// ErrNoTorch is wrapped by the error of a torch build on a machine without
// libtorch (runtime.ErrNoTorch: the text names the Debian package
// libtorch-dev).
var ErrNoTorch = runtime.ErrNoTorch

// findCXX resolves the C++ compiler of the torch runtime: cxx, else
// "c++".
func findCXX(ctx context.Context, cxx string, timeout time.Duration) (*compiler, error) {
	if strings.TrimSpace(cxx) == "" {
		cxx = "c++"
	}
	c, err := findCompiler(ctx, cxx, timeout, "")
	if err != nil {
		return nil, fmt.Errorf("%w (the torch runtime needs a C++17 compiler: CXX)", err)
	}
	return c, nil
}

// torchRuntimeKey hashes everything that determines a C++ runtime library:
// what runtimeKey covers (its sources and the C compiler), the C++
// compiler's identity and flags, the link flags and the framework version.
func torchRuntimeKey(lib runtime.Lib, cc, cxx *compiler) string {
	return hashParts("rxeq-runtime-cxx-v1", runtimeKey(lib, cc), strings.Join(lib.CXXSources, " "),
		strings.Join(lib.CXXFlags, " "), strings.Join(lib.LinkFlags, " "), lib.Version,
		cxx.path, strings.Join(cxx.args, " "), cxx.ident)
}

// cFlagsNoLink are the C flags of an object compile (buildFlags without
// -shared).
func cFlagsNoLink() []string {
	var out []string
	for _, f := range buildFlags {
		if f != "-shared" {
			out = append(out, f)
		}
	}
	return out
}

// buildCXXRuntime returns the path and key of a valid cached runtime
// library with C++ sources (the torch runtime), building it when the cache
// has none: each C source compiled with cc, each C++ source with cxx, then
// linked -shared by cxx with the library's link flags. Files appear in the
// cache as for every build (private source directory, temporary object,
// checksum, rename), under the entry's lock.
func buildCXXRuntime(ctx context.Context, lib runtime.Lib, cc, cxx *compiler, dir string, timeout time.Duration) (path, key string, err error) {
	e := entry{dir: dir, key: torchRuntimeKey(lib, cc, cxx), prefix: "rt-"}
	err = e.ensure(func() error { return e.compileCXX(ctx, lib, cc, cxx, timeout) })
	if err != nil {
		return "", "", err
	}
	return e.object(), e.key, nil
}

func (e entry) compileCXX(ctx context.Context, lib runtime.Lib, cc, cxx *compiler, timeout time.Duration) error {
	sd := e.srcDir()
	if err := os.MkdirAll(sd, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := checkPrivate(sd, true); err != nil {
		return err
	}
	for _, f := range lib.Files {
		if err := writeAtomic(filepath.Join(sd, f.Name), []byte(f.Text), 0o600); err != nil {
			return fmt.Errorf("%w: %v", ErrCache, err)
		}
	}
	run := func(c *compiler, main string, args ...string) error {
		var out bytes.Buffer
		argv := append(append([]string(nil), c.args...), args...)
		if err := runCompiler(ctx, c.path, argv, sd, &out, timeout); err != nil {
			if ctx.Err() != nil && !errors.Is(err, errCompileTimeout) {
				return context.Cause(ctx)
			}
			return fmt.Errorf("%w: %q failed on %s: %v\n%s", ErrCompiler, c.spec, filepath.Join(sd, main), err, strings.TrimSpace(out.String()))
		}
		return nil
	}
	var objs []string
	for _, s := range lib.CSources {
		o := s + ".o"
		args := append(cFlagsNoLink(), "-iquote", ".", "-c", s, "-o", o)
		if err := run(cc, s, args...); err != nil {
			return err
		}
		objs = append(objs, o)
	}
	for _, s := range lib.CXXSources {
		o := s + ".o"
		args := append(append([]string(nil), lib.CXXFlags...), "-iquote", ".", "-c", s, "-o", o)
		if err := run(cxx, s, args...); err != nil {
			return err
		}
		objs = append(objs, o)
	}
	tmp, err := os.CreateTemp(e.dir, ".tmp-*.so")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	args := append([]string{"-shared"}, runtimeLinkFlags...)
	args = append(append(append(args, "-o", tmpPath), objs...), lib.LinkFlags...)
	args = append(args, "-lm")
	if err := run(cxx, lib.CXXSources[len(lib.CXXSources)-1], args...); err != nil {
		return err
	}
	for _, o := range objs {
		os.Remove(filepath.Join(sd, o))
	}
	return e.install(tmpPath)
}

// runtimePath checks Options.Runtime and returns the Path its results
// carry.
func runtimePath(name executor.Name) (Path, error) {
	switch name {
	case "", executor.Native:
		return executor.Native, nil
	case executor.Torch:
		return executor.Torch, nil
	}
	return "", fmt.Errorf("%w: unknown runtime %q (want %s or %s)", ErrUnsupported, name, executor.Native, executor.Torch)
}

// torchRuntime finds libtorch and the C++ compiler, builds the torch
// runtime into the cache (once per source, compilers, flags and libtorch
// version), loads it for the rest of the process and sets its threads.
func (p *Program) torchRuntime(ctx context.Context, cc *compiler, dir string, opts Options) (string, string, error) {
	lib, err := runtime.Torch(opts.TorchRoot)
	if err != nil {
		return "", "", err
	}
	cxx, err := findCXX(ctx, opts.CXX, opts.CompileTimeout)
	if err != nil {
		return "", "", err
	}
	path, key, err := buildCXXRuntime(ctx, lib, cc, cxx, dir, opts.CompileTimeout)
	if err != nil {
		return "", "", err
	}
	if _, err := configureTorch(path, opts.TorchThreads); err != nil {
		return "", "", err
	}
	p.info.Framework = lib.Version
	return path, key, nil
}

// KernelOp names an op of the torch runtime's RX_E_KERNEL status (the
// RX_K_* codes of rx_aten.cc).
type KernelOp int64

var kernelOps = [...]string{1: "Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Neg", "Tanh", "Exp", "Log",
	"Sigmoid", "Relu", "Abs", "Sqrt", "MatMul", "Transpose", "Softmax", "LogSoftmax", "Sum", "Mean", "Max", "Argmax"}

// String returns the op's name in the language ("MatMul"), or "op N".
func (k KernelOp) String() string {
	if k > 0 && int(k) < len(kernelOps) {
		return kernelOps[k]
	}
	return fmt.Sprintf("op %d", int64(k))
}

// kernelError is the error of a call whose framework kernel threw: the
// same text for every such failure of op in fn, whatever ATen's message.
func kernelError(fn string, op int64) error {
	return fmt.Errorf("%w: %s: %s: the framework threw (a bug in rxeq's torch runtime or in libtorch, never in the program)", ErrKernel, fn, KernelOp(op))
}

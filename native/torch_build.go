package native

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native/build"
	"github.com/rextio/rxeq/native/runtime"
)

// ErrNoTorch is wrapped by the error of a torch build on a machine without
// libtorch (runtime.ErrNoTorch: the text names the Debian package
// libtorch-dev).
var ErrNoTorch = runtime.ErrNoTorch

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
func (p *Program) torchRuntime(ctx context.Context, cc *build.Compiler, dir string, opts Options) (string, string, error) {
	lib, err := runtime.Torch(opts.TorchRoot)
	if err != nil {
		return "", "", err
	}
	cxx, err := build.FindCXX(ctx, opts.CXX, opts.CompileTimeout)
	if err != nil {
		return "", "", err
	}
	path, key, err := build.BuildCXXRuntime(ctx, lib, cc, cxx, dir, opts.CompileTimeout)
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

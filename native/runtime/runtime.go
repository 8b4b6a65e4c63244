// Package runtime holds the C sources of rxeq's native runtimes, embedded
// so that package native can build them into its cache.
//
// rx_runtime.h is the C API that generated code calls and the ABI the Go
// call bridge uses. A runtime library implements it: the "native" runtime
// is rx_context.c (the invocation context, validation, moves, integer
// scalar ops) with rx_kernels.c (rxeq's own float32 kernels); the "torch"
// runtime (Torch) is the same rx_context.c with rx_aten.cc, whose float
// kernels are libtorch's ATen ops, compiled as C++17. The runtime
// library is compiled once per (sources, compiler, flags) into the build
// cache, and every generated program is linked against it, so a program's
// translation unit holds only its own functions and includes nothing but
// rx_runtime.h.
//
// The sources live in csrc/, a directory without Go files, so that the Go
// toolchain never compiles them into a Go binary (which would export the
// runtime's symbols from the executable and let them interpose on the
// runtime libraries that generated programs load).
package runtime

import (
	_ "embed"
)

// File is one source file of a runtime: its name in the build directory
// and its text.
type File struct {
	Name string
	Text string
}

//go:embed csrc/rx_runtime.h
var header string

//go:embed csrc/rx_internal.h
var internal string

//go:embed csrc/rx_context.c
var context string

//go:embed csrc/rx_kernels.c
var kernels string

// HeaderName is the name of the header that generated code includes.
const HeaderName = "rx_runtime.h"

// Header returns the text of rx_runtime.h.
func Header() string { return header }

// Lib describes one runtime library: the files written into its build
// directory, which of them are compiled as C and which as C++, what the
// library is linked with, and the version of any framework it wraps.
type Lib struct {
	// Name is the executor the runtime serves ("native" or "torch").
	Name string
	// Files are every file of the build, headers first.
	Files []File
	// CSources names the files compiled with the C compiler, in order.
	CSources []string
	// CXXSources names the files compiled with the C++ compiler (CXXFlags),
	// in order; when there are any, the library is linked by the C++
	// compiler.
	CXXSources []string
	// CXXFlags are the C++ compiler flags (include paths among them).
	CXXFlags []string
	// LinkFlags come after the objects when the library is linked (-L,
	// -l and rpath flags of the framework).
	LinkFlags []string
	// Version identifies the framework the runtime is built against (for
	// the cache key and reports); "" for the native runtime.
	Version string
}

// Native returns the runtime of rxeq's own kernels.
func Native() Lib {
	return Lib{
		Name: "native",
		Files: []File{
			{HeaderName, header},
			{"rx_internal.h", internal},
			{"rx_context.c", context},
			{"rx_kernels.c", kernels},
		},
		CSources: []string{"rx_context.c", "rx_kernels.c"},
	}
}

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
	"fmt"
	goruntime "runtime"
	"strings"

	"golang.org/x/sys/cpu"
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
	// Args are compiler arguments of this library's build only, given
	// before the sources (defines). Part of the cache key.
	Args []string
	// Libs are the libraries it links, after the sources and before -lm.
	// Part of the cache key.
	Libs []string
	// ISA is the widest instruction set the library's kernels may choose
	// at load time ("avx512", "avx2", "sse2" or "c"); the kernels take the
	// widest one the CPU supports up to it. Part of the cache key.
	ISA string
}

// ISAs are the instruction sets of the native kernels, narrowest first.
var ISAs = []string{"c", "sse2", "avx2", "avx512"}

// DetectISA returns the widest ISA of the native kernels that this CPU
// supports (golang.org/x/sys/cpu; the C side checks again with
// __builtin_cpu_supports when the library loads), capped by limit when
// that names one of ISAs ("" for no cap). It is an error for limit to
// name anything else. The rxeq command takes the cap from
// $RXEQ_NATIVE_ISA (executor/builtin.Config.FromEnv); nothing here reads
// the environment.
func DetectISA(limit string) (string, error) {
	best := 0
	if goruntime.GOARCH == "amd64" {
		best = 1
		if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
			best = 2
			if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ {
				best = 3
			}
		}
	}
	if v := strings.TrimSpace(limit); v != "" {
		cap := -1
		for i, name := range ISAs {
			if name == v {
				cap = i
			}
		}
		if cap < 0 {
			return "", fmt.Errorf("ISA %q: want one of %s", v, strings.Join(ISAs, ", "))
		}
		best = min(best, cap)
	}
	return ISAs[best], nil
}

// Native returns the runtime of rxeq's own kernels for this CPU:
// NativeFor(DetectISA("")).
func Native() Lib {
	isa, err := DetectISA("")
	if err != nil {
		isa = "c"
	}
	return NativeFor(isa)
}

// NativeFor returns the runtime of rxeq's own kernels allowed up to isa
// (one of ISAs), with its transcendentals from SLEEF (libsleef, linked with
// -lsleef); WithoutSLEEF gives the same runtime for a system without it.
func NativeFor(isa string) Lib {
	n := 0
	for i, name := range ISAs {
		if name == isa {
			n = i
		}
	}
	return Lib{
		Name: "native",
		Files: []File{
			{HeaderName, header},
			{"rx_internal.h", internal},
			{"rx_context.c", context},
			{"rx_kernels.c", kernels},
		},
		CSources: []string{"rx_context.c", "rx_kernels.c"},
		Args:     []string{fmt.Sprintf("-DRX_ISA_CAP=%d", n)},
		Libs:     []string{"-lsleef"},
		ISA:      ISAs[n],
	}
}

// WithoutSLEEF returns l built without SLEEF: the kernels then evaluate
// Tanh, Exp, Log and Sigmoid with libm's float64 functions one element at
// a time (as accurate, several times slower).
func (l Lib) WithoutSLEEF() Lib {
	l.Args = append(append([]string(nil), l.Args...), "-DRX_NO_SLEEF")
	var libs []string
	for _, x := range l.Libs {
		if x != "-lsleef" {
			libs = append(libs, x)
		}
	}
	l.Libs = libs
	return l
}

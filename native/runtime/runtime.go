// Package runtime holds the C runtime of rxeq's native backend:
// rx_runtime.h (the ABI shared by the Go call bridge and the generated code)
// and rx_runtime.c (the invocation context and the tensor kernels). Both are
// embedded so that package native can write them next to every generated
// translation unit, which includes rx_runtime.c; the runtime is compiled
// into each generated library and is never shared between libraries.
//
// The package uses cgo only so that the Go toolchain accepts a .c file in
// its directory; everything in rx_runtime.c is static, so the copy cgo
// compiles into a Go binary exports no symbols and is never called.
package runtime

import (
	_ "embed"
)

//go:embed rx_runtime.h
var header string

//go:embed rx_runtime.c
var source string

// Header returns the text of rx_runtime.h.
func Header() string { return header }

// Source returns the text of rx_runtime.c.
func Source() string { return source }

// HeaderName and SourceName are the file names the generated code includes.
const (
	HeaderName = "rx_runtime.h"
	SourceName = "rx_runtime.c"
)

package runtime

// The import of "C" makes this a cgo package so that rx_runtime.c may live
// in its directory (see the package documentation).

// #cgo CFLAGS: -std=c11
import "C"

//go:build !unix

package main

import "io"

// terminalWidth reports whether w is a terminal; on this system rxeq
// does not ask, and draws no live progress.
func terminalWidth(io.Writer) (width int, ok bool) { return 0, false }

//go:build unix

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth reports whether w is a terminal and, if so, its width in
// columns (0 when the terminal does not say). A file that is not a
// terminal (a pipe, a regular file, /dev/null) fails the window-size
// request.
func terminalWidth(w io.Writer) (width int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile {
		return 0, false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}

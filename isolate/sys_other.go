//go:build !linux

package isolate

import (
	"os"
	"syscall"
)

// privateStdout returns stdout itself: outside Linux the worker does not
// move descriptor 1.
func privateStdout() (*os.File, error) {
	return os.NewFile(1, "protocol"), nil
}

// sysProcAttr puts the worker in its own process group, so a timeout kills
// it and anything it started.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

//go:build !linux

package external

import (
	"os"
	"syscall"
)

// externalSysProcAttr puts an external executor in its own process group,
// so a timeout kills it and whatever it started.
func externalSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// growPipe leaves the pipe's buffer as it is outside Linux.
func growPipe(*os.File) {}

//go:build !linux

package subproc

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group, so a timeout kills
// it and anything it started.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// growPipe leaves the pipe's buffer as it is outside Linux.
func growPipe(*os.File) {}

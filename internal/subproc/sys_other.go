//go:build !linux

package subproc

import (
	"errors"
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

// waitExited cannot wait without reaping outside Linux: the group is
// killed only while the leader runs.
func waitExited(int) bool { return false }

// growPipe leaves the pipe's buffer as it is outside Linux.
func growPipe(*os.File) {}

// unread cannot tell outside Linux.
func unread(syscall.RawConn) int { return 0 }

// guardProcAttr is sysProcAttr: without a parent-death signal, a Guard
// kills its group only when it is sent SIGTERM.
func guardProcAttr() *syscall.SysProcAttr { return sysProcAttr() }

// BecomeSubreaper is unsupported outside Linux: it returns an error and
// changes nothing.
func BecomeSubreaper() error { return errors.ErrUnsupported }

// KillDescendants does nothing outside Linux, where the process tree is
// not read; what Kill kills (the process group) is all that is killed.
func KillDescendants() {}

// procInfo is not read outside Linux.
type procInfo struct{}

// leftBehind finds nothing outside Linux.
func leftBehind(int, string) []procInfo { return nil }

// killed is not used outside Linux.
type killed struct{}

// killAll does nothing outside Linux.
func killAll([]procInfo) []killed { return nil }

// reap does nothing outside Linux.
func reap([]killed) {}

//go:build !linux

package harness

import "syscall"

// externalSysProcAttr puts an external executor in its own process group,
// so a timeout kills it and whatever it started.
func externalSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

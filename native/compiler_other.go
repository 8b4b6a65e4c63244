//go:build !linux

package native

import "syscall"

// compilerProcAttr puts a compiler run in a process group of its own, so a
// timeout kills its children too.
func compilerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

//go:build !linux

package build

import (
	"os"
	"syscall"
)

// compilerProcAttr puts a compiler run in a process group of its own, so a
// timeout kills its children too.
func compilerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// ScratchDir is where a throwaway build cache belongs: os.TempDir()
// outside Linux (see the Linux build for /dev/shm).
func ScratchDir() string { return os.TempDir() }

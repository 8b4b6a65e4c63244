package subproc

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group (so a timeout
// kills it and anything it started) and kills it when the parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// fSetPipeSize is Linux's F_SETPIPE_SZ (not in package syscall).
const fSetPipeSize = 1031

// growPipe asks for a 1 MiB pipe buffer, so that megabytes of tensor data
// cross in fewer context switches; a refusal (a lower
// /proc/sys/fs/pipe-max-size) leaves the default.
func growPipe(f *os.File) {
	if sc, err := f.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, 1<<20)
		})
	}
}

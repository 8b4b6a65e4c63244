package subproc

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the child in its own process group (so a timeout
// kills it and anything it started) and kills it when the parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// waitExited blocks until process pid has exited, without reaping it,
// and reports whether it did: the exited leader (a zombie) keeps its
// process group id from being reused, so the group can still be killed
// safely.
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}

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

// unread returns how many bytes wait in the pipe of sc (FIONREAD, which
// Linux answers on either end of a pipe); 0 when it cannot tell.
func unread(sc syscall.RawConn) int {
	n := 0
	if sc != nil {
		_ = sc.Control(func(fd uintptr) {
			v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
			if err == nil {
				n = v
			}
		})
	}
	return n
}

// guardProcAttr is sysProcAttr for a Guard shell: SIGTERM when the parent
// dies, which its trap turns into a SIGKILL of its whole group.
func guardProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

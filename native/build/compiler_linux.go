package build

import (
	"os"
	"syscall"
)

// ScratchDir is where a throwaway build cache belongs: a directory whose
// file operations are cheap, because a fuzzing session builds and loads
// thousands of small libraries it never reuses. On Linux that is /dev/shm
// when it is a writable tmpfs from which code may be loaded (not mounted
// noexec), where creating a file costs microseconds rather than the
// hundreds of microseconds of a journaled disk; otherwise, or when $TMPDIR
// says where temporary files go, os.TempDir().
func ScratchDir() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	const shm = "/dev/shm"
	const tmpfsMagic = 0x01021994
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err != nil || st.Type != tmpfsMagic || st.Flags&(stNoExec|stReadOnly) != 0 {
		return os.TempDir()
	}
	if syscall.Access(shm, 0x2|0x1) != nil { // W_OK|X_OK
		return os.TempDir()
	}
	return shm
}

// The statfs mount flags ScratchDir looks at (ST_RDONLY, ST_NOEXEC).
const (
	stReadOnly = 0x1
	stNoExec   = 0x8
)

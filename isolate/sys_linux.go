package isolate

import (
	"os"
	"syscall"
)

// privateStdout duplicates file descriptor 1 for the protocol and points
// descriptor 1 at stderr.
func privateStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

// Package signame names the signals a child process dies of, as crash
// reports print them ("SIGSEGV"), for the supervisor of rxeq's executor
// processes (package internal/subproc).
package signame

import (
	"fmt"
	"syscall"
)

var names = map[syscall.Signal]string{
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS",
	syscall.SIGFPE: "SIGFPE", syscall.SIGILL: "SIGILL", syscall.SIGKILL: "SIGKILL",
	syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGSYS: "SIGSYS", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGHUP: "SIGHUP", syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
}

// Name returns the conventional name of s ("SIGSEGV"), or its number and
// description for a signal without one here ("34 (signal 34)").
func Name(s syscall.Signal) string {
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("%d (%v)", int(s), s)
}

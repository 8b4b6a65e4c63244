package subproc

import "syscall"

// guardScript is the shell program of Guard: it runs the command in the
// background with the shell's own stdin (passed on as fd 3: a background
// job of a non-interactive shell would otherwise read /dev/null), waits for it
// and exits with its status; SIGTERM or SIGHUP make it SIGKILL its whole
// process group, itself included.
const guardScript = `trap 'kill -KILL 0' TERM HUP
exec 3<&0
"$@" <&3 3<&- &
wait $!`

// Guard wraps argv in a guard: a /bin/sh that runs argv and, when it is
// sent SIGTERM or SIGHUP, kills its whole process group. Started with
// GuardProcAttr (its own group, and SIGTERM when rxeq dies, on Linux),
// nothing argv starts outlives rxeq, not even when rxeq is killed with
// SIGKILL and runs no code of its own: the parent-death signal reaches
// only the direct child, the guard, whose trap then kills the compiler
// driver's cc1plus as well as the driver. The exit status is argv's (128
// + N for a command killed by signal N).
func Guard(argv []string) []string {
	return append([]string{"/bin/sh", "-c", guardScript, "rxeq-guard"}, argv...)
}

// watchScript is the shell program of a guard that also watches a pipe
// (fd 3) whose write end only rxeq holds: a background reader gets EOF
// when rxeq dies, whatever the guard shell is doing, and then SIGKILLs the
// whole group. The parent-death signal alone has a race when the command
// exits because rxeq died: the kernel closes a dying process's files
// (the command's stdin: it reads EOF and exits, so the shell's wait
// returns and the shell exits normally) before it signals its children,
// and a shell that has exited runs no trap, so what the command started
// would live on. The reader is in the group and dies with it when rxeq
// kills the group after the shell exits.
const watchScript = `trap 'kill -KILL 0' TERM HUP
exec 4<&0
{ read -r _ <&3; kill -KILL 0; } 4<&- &
exec 3<&-
"$@" <&4 4<&- &
wait $!`

// guardWatch is Guard with watchScript: the command's fd 3 must be the
// read end of a pipe whose write end stays open in rxeq, and only there,
// for as long as the process is wanted.
func guardWatch(argv []string) []string {
	return append([]string{"/bin/sh", "-c", watchScript, "rxeq-guard"}, argv...)
}

// GuardProcAttr is the SysProcAttr to start a Guard with: a process group
// of its own, and on Linux SIGTERM when its parent dies.
func GuardProcAttr() *syscall.SysProcAttr { return guardProcAttr() }

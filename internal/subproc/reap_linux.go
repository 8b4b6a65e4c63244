package subproc

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes this process a child subreaper
// (prctl(PR_SET_CHILD_SUBREAPER)): a process that a child of this one
// started and then left behind, even one that left its process group and
// session with setsid, is re-parented to this process instead of init,
// so that Kill and KillDescendants find it and it can be reaped. It is
// process-wide and meant for the command's main (cmd/rxeq), not for
// library code; a process that calls it should call KillDescendants
// before it exits.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// procInfo is what /proc/PID/stat says of one process.
type procInfo struct {
	pid, ppid int
	pgid      int
	state     byte
	start     uint64 // start time in clock ticks since boot: pid and start name one process
}

// readProc reads /proc/PID/stat; false when the process is gone.
func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// "PID (COMM) STATE PPID PGRP SESSION … STARTTIME (field 22) …": COMM
	// may hold anything, so fields are counted after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(f[0]) != 1 {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0], start: start}, true
}

// allProcs lists the processes of the system.
func allProcs() []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make([]procInfo, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if pi, ok := readProc(pid); ok {
			out = append(out, pi)
		}
	}
	return out
}

// hasEnv reports whether the environment process pid started with holds
// the entry kv ("NAME=VALUE"); false when it cannot be read (another
// user's process, a zombie).
func hasEnv(pid int, kv []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			i = len(b)
		}
		if bytes.Equal(b[:i], kv) {
			return true
		}
		b = b[min(i+1, len(b)):]
	}
	return false
}

// leftBehind returns the processes started on behalf of the process
// leader (not leader itself): its descendants and the members of its
// process group (the zombies of a group kill among them, which this
// process reaps when they were re-parented here), the processes whose
// environment holds tokenEnv (wherever they were re-parented: to this
// process when it is a subreaper, else to init) and their descendants.
// leader is -1 once it has been reaped: its pid, and so its group, may
// be another process's by then.
func leftBehind(leader int, tokenEnv string) []procInfo {
	procs := allProcs()
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	self := os.Getpid()
	seen := map[int]bool{leader: true, self: true}
	var out []procInfo
	var add func(p procInfo)
	add = func(p procInfo) {
		if seen[p.pid] {
			return
		}
		seen[p.pid] = true
		out = append(out, p)
		for _, c := range children[p.pid] {
			add(c)
		}
	}
	for _, c := range children[leader] {
		add(c)
	}
	for _, p := range procs {
		if leader > 0 && p.pgid == leader {
			add(p)
		}
	}
	kv := []byte(tokenEnv)
	for _, p := range procs {
		if !seen[p.pid] && p.state != 'Z' && hasEnv(p.pid, kv) {
			add(p)
		}
	}
	return out
}

// descendants returns every process below this one (its children, theirs,
// and so on).
func descendants() []procInfo {
	procs := allProcs()
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []procInfo
	var walk func(pid int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			out = append(out, c)
			walk(c.pid)
		}
	}
	walk(os.Getpid())
	return out
}

// killed is a process sent SIGKILL through its pidfd, which names that
// process and no other even once its pid is reused.
type killed struct {
	procInfo
	fd int
}

// killAll sends SIGKILL to each process of ps that is still the one that
// was listed (same pid, same start time), through a pidfd.
func killAll(ps []procInfo) []killed {
	var out []killed
	for _, p := range ps {
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			continue // gone
		}
		if now, ok := readProc(p.pid); !ok || now.start != p.start {
			unix.Close(fd) // gone, and the pid is another process's now
			continue
		}
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		out = append(out, killed{p, fd})
	}
	return out
}

// reapWait bounds how long reap waits for killed processes to go.
const reapWait = 2 * time.Second

// reap waits until each killed process is gone: reaped by this process
// when it was re-parented here (BecomeSubreaper), else by its own parent.
// It gives up after reapWait (a process in uninterruptible sleep), and
// closes the pidfds.
func reap(ks []killed) {
	deadline := time.Now().Add(reapWait)
	pause := time.Millisecond
	self := os.Getpid()
	dying := map[int]bool{}
	for _, k := range ks {
		dying[k.pid] = true
	}
	for len(ks) > 0 {
		left := ks[:0]
		for _, k := range ks {
			var info unix.Siginfo
			// Reaps k when it has exited and is this process's child
			// (re-parented here); ECHILD otherwise, and then its own
			// parent reaps it, or, when that parent is one of the
			// killed too, this process once k is re-parented here.
			_ = unix.Waitid(unix.P_PIDFD, k.fd, &info, unix.WEXITED|unix.WNOHANG, nil)
			now, ok := readProc(k.pid)
			if !ok || now.start != k.start {
				unix.Close(k.fd) // reaped
				continue
			}
			if now.state == 'Z' && now.ppid != self && !dying[now.ppid] {
				// Dead and left to a parent that lives on and is not
				// this process (init, or a process outside what was
				// killed), which reaps it; its pid cannot be reused
				// until then, and waiting for that parent would only
				// hold up the one that killed it. A zombie whose parent
				// is this process, or is one of the killed (so that it
				// comes here when this process is a subreaper), is
				// waited for and reaped above.
				unix.Close(k.fd)
				continue
			}
			left = append(left, k)
		}
		ks = left
		if len(ks) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
	for _, k := range ks {
		unix.Close(k.fd)
	}
}

// KillDescendants kills every process below this one (SIGKILL, once each,
// through a pidfd) and returns without waiting for them: what a command
// calls as it exits, so that nothing it started outlives it. With
// BecomeSubreaper, that includes what left its process group and
// session.
func KillDescendants() {
	for _, k := range killAll(descendants()) {
		unix.Close(k.fd)
	}
}

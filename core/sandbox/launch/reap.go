package launch

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// reapDeadline bounds the cleanup of a command's descendants (a process stuck in
// uninterruptible sleep cannot be reaped; the launcher then leaves it behind).
const reapDeadline = 5 * time.Second

// reapAll kills and reaps every remaining descendant of the launcher. The command
// itself has been reaped; as the launcher is a child subreaper, whatever the
// command left running (double fork, setsid) is its child or a descendant of one.
// Fast path: no child at all (one wait4).
func reapAll() {
	deadline := time.Now().Add(reapDeadline)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		switch {
		case err == unix.EINTR || pid > 0:
			continue
		case err != nil: // ECHILD: nothing left
			return
		}
		if time.Now().After(deadline) {
			return
		}
		killDescendants()
		time.Sleep(time.Millisecond)
	}
}

// killDescendants sends SIGKILL to every descendant of the launcher, found through
// the parent links in /proc (a killed process's children become the launcher's,
// and are found again by the next pass of reapAll).
func killDescendants() {
	self := os.Getpid()
	parent := map[int]int{}
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(n); ok {
			parent[pid] = ppid
		}
	}
	for pid := range parent {
		for p, hops := parent[pid], 0; p > 1 && hops < len(parent); p, hops = parent[p], hops+1 {
			if p == self {
				_ = unix.Kill(pid, unix.SIGKILL)
				break
			}
		}
	}
}

// parentOf reads the parent pid from /proc/<pid>/stat ("pid (comm) state ppid ...",
// where comm may itself hold spaces and parentheses).
func parentOf(pid string) (int, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

package launch

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Arg is the first argument that makes a binary act as the launcher: main must call
// Main when os.Args[1] == Arg.
const Arg = "__sandbox"

const (
	// SpecFD carries the encoded Spec, read to EOF.
	SpecFD = 3
	// StatusFD reports to Run: StatusStarted once the command runs, then its wait
	// status as a decimal line when it has ended and every process it started is
	// gone; anything else (then EOF) is the error that kept it from starting.
	StatusFD = 4
	// StatusStarted is the first line on StatusFD when the command started.
	StatusStarted = "ok\n"
	// Failed is the launcher's exit code when it could not start the command.
	Failed       = 125
	maxOpenFiles = 1024
	// maxUserProcs is RLIMIT_NPROC for commands when the server is not root: it
	// counts every process and thread of the server's user (the server and every
	// running command included), so it bounds a fork bomb, not one command.
	maxUserProcs = 1024
)

// wrap prefixes err with what failed (fmt.Errorf without fmt's weight).
func wrap(what string, err error) error { return errors.New(what + ": " + err.Error()) }

// Main is the launcher. It stays the parent of the command for the whole call:
//
//   - it becomes a child subreaper, so every process the command starts (setsid and
//     double fork included) stays its descendant, and all of them are killed and
//     reaped before it reports the command's end;
//   - a dedicated OS thread (never the thread group leader, so that a command
//     confined by Landlock's signal scope cannot kill the launcher) drops every
//     capability, sets no_new_privs, applies Landlock and the seccomp filter and
//     forks the command, which inherits exactly that state; every descriptor above
//     2 is close-on-exec first, so the command gets stdin, stdout and stderr only;
//   - the command starts traced and stopped at its first instruction, gets its
//     rlimits (prlimit) and is released, so the rlimits never apply to the launcher;
//   - SIGTERM (Run's timeout or cancellation, or the server's death through
//     PDEATHSIG) kills the command and every descendant.
//
// It returns Failed after reporting an error on StatusFD when the command could
// not start, else 0 after reporting the command's wait status.
func Main(_ []string) int {
	// The main goroutine keeps the group leader thread for itself: the command
	// goroutine can never run its confinement on it.
	runtime.LockOSThread()
	status := os.NewFile(StatusFD, "status")
	fail := func(err error) int {
		if status != nil {
			_, _ = status.WriteString(err.Error())
		}
		return Failed
	}
	f := os.NewFile(SpecFD, "spec")
	if f == nil {
		return fail(errors.New("no spec"))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSpec+1))
	f.Close()
	if err != nil {
		return fail(errBadSpec)
	}
	l, err := Decode(b)
	if err != nil {
		return fail(err)
	}
	if err := closeOnExecAbove2(); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(wrap("subreaper", err))
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	pids := make(chan int, 1)
	slow := make(chan unix.WaitStatus, 1)
	go command(&l, status, pids, slow)
	// The command goroutine reports and exits the process itself when the command
	// ended with no descendant left (the fast path); this goroutine only wakes for
	// SIGTERM or when descendants must be hunted through /proc, which the confined
	// command thread cannot read.
	var ws unix.WaitStatus
	select {
	case ws = <-slow:
	case <-term:
		pid := <-pids
		_ = unix.Kill(pid, unix.SIGKILL)
		killDescendants()
		ws = <-slow
	}
	reapAll()
	report(status, ws)
	return 0
}

// report closes the launcher's stdout and stderr (the command and its descendants
// are gone: Run's copies reach EOF) and writes the command's wait status, Run's
// last line on StatusFD. Run does not wait for the launcher's own exit.
func report(status *os.File, ws unix.WaitStatus) {
	_ = unix.Close(1)
	_ = unix.Close(2)
	_, _ = status.WriteString(strconv.FormatUint(uint64(ws), 10) + "\n")
}

// command runs on its own locked thread, which it never gives back: that thread is
// confined, is the command's parent and tracer, and waits for it. It reports the
// start on status; when the command has ended and no descendant is left, it
// reports the end and exits the launcher, else it hands the status over on slow.
func command(l *Spec, status *os.File, pids chan<- int, slow chan<- unix.WaitStatus) {
	runtime.LockOSThread()
	pid, err := startCommand(l)
	if err != nil {
		_, _ = status.WriteString(err.Error())
		os.Exit(Failed)
	}
	pids <- pid
	_, _ = status.WriteString(StatusStarted)
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	if _, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil); err == unix.ECHILD {
		report(status, ws)
		os.Exit(0)
	}
	slow <- ws
}

// startCommand confines the calling thread, forks the command from it stopped at
// its first instruction, sets its rlimits and lets it run.
func startCommand(l *Spec) (int, error) {
	if unix.Gettid() == unix.Getpid() {
		return 0, errors.New("launcher: the command thread is the group leader")
	}
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, wrap("no_new_privs", err)
	}
	if l.Landlock {
		if err := restrict(l); err != nil {
			return 0, err
		}
	}
	if err := installSeccomp(l.Network); err != nil {
		return 0, err
	}
	pid, err := syscall.ForkExec(l.Argv[0], l.Argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Pdeathsig: the command dies if this thread (the launcher) does.
		Sys: &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return 0, wrap("exec", err)
	}
	var ws unix.WaitStatus
	for {
		if _, err = unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	if err != nil || !ws.Stopped() {
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, errors.New("launcher: the command did not stop at exec")
	}
	if err := setLimits(pid, l); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, err
	}
	if err := unix.PtraceDetach(pid); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, wrap("ptrace detach", err)
	}
	return pid, nil
}

// closeOnExecAbove2 marks every descriptor above 2 close-on-exec: whatever the
// server leaked (a descriptor inherited from its own parent without CLOEXEC) never
// reaches the command. close_range when the kernel has it (5.11), else each
// descriptor up to the open-files limit.
func closeOnExecAbove2() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return wrap("rlimit nofile", err)
	}
	for fd := 3; fd < int(min(lim.Cur, 1<<20)); fd++ {
		unix.CloseOnExec(fd)
	}
	return nil
}

// setLimits sets the rlimits of the (stopped) command.
func setLimits(pid int, l *Spec) error {
	set := func(res int, cur, max uint64) error {
		return unix.Prlimit(pid, res, &unix.Rlimit{Cur: cur, Max: max}, nil)
	}
	if err := set(unix.RLIMIT_CORE, 0, 0); err != nil {
		return wrap("rlimit core", err)
	}
	if err := set(unix.RLIMIT_NOFILE, maxOpenFiles, maxOpenFiles); err != nil {
		return wrap("rlimit nofile", err)
	}
	// For root RLIMIT_NPROC is never enforced; for any other user it counts the
	// whole user (maxUserProcs).
	if os.Geteuid() != 0 {
		if err := set(unix.RLIMIT_NPROC, maxUserProcs, maxUserProcs); err != nil {
			return wrap("rlimit nproc", err)
		}
	}
	if l.Memory > 0 {
		if err := set(unix.RLIMIT_AS, uint64(l.Memory), uint64(l.Memory)); err != nil {
			return wrap("rlimit as", err)
		}
	}
	if l.CPU > 0 {
		// Soft limit sends SIGXCPU, the hard one a second later SIGKILL.
		if err := set(unix.RLIMIT_CPU, uint64(l.CPU), uint64(l.CPU)+1); err != nil {
			return wrap("rlimit cpu", err)
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize)); err != nil {
			return wrap("rlimit fsize", err)
		}
	}
	return nil
}

// dropCapabilities empties the bounding, ambient and inheritable sets of the
// calling thread, so that a server running as root still starts the command
// without any capability (no CAP_DAC_OVERRIDE, CAP_SYS_TIME, CAP_CHOWN,
// CAP_KILL, CAP_MKNOD...). A uid 0 still owns root's files: Landlock is what keeps
// those out of reach.
func dropCapabilities() error {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return wrap("capget", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		for c := 0; c <= 63; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
				return wrap("capbset drop", err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return wrap("ambient", err)
	}
	for i := range data {
		data[i].Inheritable = 0
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return wrap("capset", err)
	}
	return nil
}

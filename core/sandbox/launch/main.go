package launch

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Arg is the first argument that makes a binary act as the launcher: main must call
// Main when os.Args[1] == Arg.
const Arg = "__sandbox"

const (
	// SpecFD carries the encoded Spec, preceded by its length in SpecLenDigits
	// decimal digits, and then stays open as the stop signal: when Run closes it (a
	// timeout, a cancelled call, or the server's death), the launcher kills the
	// command and every process it started.
	SpecFD = 3
	// SpecLenDigits is the width of the length prefix on SpecFD.
	SpecLenDigits = 10
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
//   - its main thread drops every capability, sets no_new_privs, applies Landlock
//     and the seccomp filter (which also keeps the command from signalling or
//     tracing the launcher) and forks the command, which inherits exactly that
//     state; every descriptor above 2 is close-on-exec first, so the command gets
//     stdin, stdout and stderr only;
//   - the command starts traced and stopped at its first instruction, gets its
//     rlimits (prlimit) and is released, so the rlimits never apply to the launcher;
//   - EOF on SpecFD (Run's timeout or cancellation, or the server's death) kills the
//     command and every descendant.
//
// Everything on the way of a command that leaves nothing behind runs on the main
// thread, so a launch costs no more thread hand-offs than the command needs; the
// search of descendants through /proc, which the confined thread cannot read, runs
// on another (unconfined) thread. It returns Failed after reporting an error on
// StatusFD when the command could not start, else 0 after reporting the command's
// wait status.
func Main(_ []string) int {
	runtime.LockOSThread() // confinement, ptrace and the command's parenthood are per thread
	status := os.NewFile(StatusFD, "status")
	fail := func(err error) int {
		if status != nil {
			_, _ = status.WriteString(err.Error())
		}
		return Failed
	}
	l, err := readSpec()
	if err != nil {
		return fail(err)
	}
	if err := closeOnExecAbove2(); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(wrap("subreaper", err))
	}
	pid, pidfd, err := startCommand(&l)
	if err != nil {
		return fail(err)
	}
	_, _ = status.WriteString(StatusStarted)
	stopped := awaitExitOrStop(pidfd)
	if stopped {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	if _, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil); err != unix.ECHILD || stopped {
		// Descendants are left (or may be, after a stop): hunt them from an unconfined
		// thread (this one is locked, so the goroutine runs elsewhere).
		done := make(chan struct{})
		go func() {
			if stopped {
				killDescendants()
			}
			reapAll()
			close(done)
		}()
		<-done
	}
	report(status, ws)
	return 0
}

// readSpec reads the length-prefixed Spec from SpecFD, leaving it open.
func readSpec() (Spec, error) {
	var head [SpecLenDigits]byte
	if err := readFull(SpecFD, head[:]); err != nil {
		return Spec{}, errBadSpec
	}
	n, err := strconv.Atoi(string(head[:]))
	if err != nil || n < 0 || n > maxSpec {
		return Spec{}, errBadSpec
	}
	b := make([]byte, n)
	if err := readFull(SpecFD, b); err != nil {
		return Spec{}, errBadSpec
	}
	return Decode(b)
}

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}

// awaitExitOrStop waits until the command has exited (pidfd readable) or Run asks
// to stop (SpecFD readable: EOF). Without a pidfd (kernel < 5.3) it does not watch
// for a stop; Run then kills the launcher's group after its grace period.
//
// It waits in Go's poller, on an epoll descriptor of its own holding both: a thread
// blocked in a system call keeps its P, and the runtime's monitor thread then wakes
// every 20 µs for the whole command, competing with it for the CPU.
func awaitExitOrStop(pidfd int) (stopped bool) {
	if pidfd < 0 {
		return false
	}
	defer unix.Close(pidfd)
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return pollExitOrStop(pidfd)
	}
	for _, fd := range []int{pidfd, SpecFD} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(ep)
			return pollExitOrStop(pidfd)
		}
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		return pollExitOrStop(pidfd)
	}
	f := os.NewFile(uintptr(ep), "epoll")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return pollExitOrStop(pidfd)
	}
	exited := false
	rerr := rc.Read(func(fd uintptr) bool {
		var evs [2]unix.EpollEvent
		n, err := unix.EpollWait(int(fd), evs[:], 0)
		for _, ev := range evs[:max(n, 0)] {
			exited = exited || ev.Fd == int32(pidfd)
			stopped = stopped || ev.Fd == SpecFD
		}
		return (err != nil && err != unix.EINTR) || n > 0
	})
	if rerr != nil {
		return pollExitOrStop(pidfd)
	}
	return stopped && !exited
}

// pollExitOrStop is awaitExitOrStop blocking in poll(2).
func pollExitOrStop(pidfd int) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: SpecFD, Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			break
		}
	}
	return fds[0].Revents == 0 && fds[1].Revents != 0
}

// report closes the launcher's stdout and stderr (the command and its descendants
// are gone: Run's copies reach EOF) and writes the command's wait status, Run's
// last line on StatusFD. Run does not wait for the launcher's own exit.
func report(status *os.File, ws unix.WaitStatus) {
	_ = unix.Close(1)
	_ = unix.Close(2)
	_, _ = status.WriteString(strconv.FormatUint(uint64(ws), 10) + "\n")
}

// startCommand confines the calling thread, forks the command from it stopped at
// its first instruction, sets its rlimits and lets it run. It returns the
// command's pid and a pidfd (-1 when the kernel has none).
func startCommand(l *Spec) (int, int, error) {
	if err := dropCapabilities(); err != nil {
		return 0, 0, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, 0, wrap("no_new_privs", err)
	}
	if l.Landlock {
		if err := restrict(l); err != nil {
			return 0, 0, err
		}
	}
	if err := installSeccomp(l.Network); err != nil {
		return 0, 0, err
	}
	// Files and folders the command creates without naming a mode are the owner's alone
	// (0600, 0700), as every zone file is, whatever umask the server runs with.
	unix.Umask(0o077)
	pidfd := -1
	attr := &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Pdeathsig: the command dies if the launcher does.
		Sys: &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL, PidFD: &pidfd},
	}
	pid, err := syscall.ForkExec(l.Argv[0], l.Argv, attr)
	if err == syscall.EINVAL { // no CLONE_PIDFD (kernel < 5.2)
		attr.Sys.PidFD, pidfd = nil, -1
		pid, err = syscall.ForkExec(l.Argv[0], l.Argv, attr)
	}
	if err != nil {
		return 0, 0, wrap("exec", err)
	}
	kill := func(err error) (int, int, error) {
		_ = unix.Kill(pid, unix.SIGKILL)
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		return 0, 0, err
	}
	var ws unix.WaitStatus
	for {
		if _, err = unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	if err != nil || !ws.Stopped() {
		return kill(errors.New("launcher: the command did not stop at exec"))
	}
	if err := setLimits(pid, l); err != nil {
		return kill(err)
	}
	if err := unix.PtraceDetach(pid); err != nil {
		return kill(wrap("ptrace detach", err))
	}
	return pid, pidfd, nil
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

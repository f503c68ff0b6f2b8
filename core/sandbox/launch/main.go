package launch

import (
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Arg is the first argument that makes a binary act as the launcher: main must call
// Main when os.Args[1] == Arg.
const Arg = "__sandbox"

const (
	// SpecFD carries the encoded Spec, read to EOF.
	SpecFD = 3
	// StatusFD is close-on-exec: EOF means the exec succeeded, bytes are an error.
	StatusFD = 4
	// Failed is the launcher's exit code when it could not start the command.
	Failed       = 125
	maxOpenFiles = 1024
)

// wrap prefixes err with what failed (fmt.Errorf without fmt's weight).
func wrap(what string, err error) error { return errors.New(what + ": " + err.Error()) }

// Main is the launcher: it reads the Spec, drops every capability, sets
// no_new_privs, applies Landlock, sets rlimits and execs the command. It only
// returns (an exit code) when that fails, after reporting the error on StatusFD.
func Main(_ []string) int {
	// prctl, capabilities and Landlock are per thread: do them all on the thread
	// that calls execve.
	runtime.LockOSThread()
	status := os.NewFile(StatusFD, "status")
	fail := func(err error) int {
		if status != nil {
			_, _ = status.WriteString(err.Error())
		}
		return Failed
	}
	unix.CloseOnExec(StatusFD)
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
	if err := dropCapabilities(); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(wrap("no_new_privs", err))
	}
	if l.Landlock {
		if err := restrict(&l); err != nil {
			return fail(err)
		}
	}
	// Everything execve needs is allocated before the rlimits: once RLIMIT_AS is
	// below what this Go process has mapped, the runtime cannot grow any more.
	argv0, err := syscall.BytePtrFromString(l.Argv[0])
	if err != nil {
		return fail(err)
	}
	argv, err := syscall.SlicePtrFromStrings(l.Argv)
	if err != nil {
		return fail(err)
	}
	envv, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return fail(err)
	}
	if err := setLimits(&l); err != nil {
		return fail(err)
	}
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(argv0)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return fail(wrap("exec", errno))
}

// setLimits sets the rlimits that the command inherits across execve.
func setLimits(l *Spec) error {
	set := func(res int, v uint64) error {
		return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
	}
	if err := set(unix.RLIMIT_CORE, 0); err != nil {
		return wrap("rlimit core", err)
	}
	if err := set(unix.RLIMIT_NOFILE, maxOpenFiles); err != nil {
		return wrap("rlimit nofile", err)
	}
	if l.Memory > 0 {
		if err := set(unix.RLIMIT_AS, uint64(l.Memory)); err != nil {
			return wrap("rlimit as", err)
		}
	}
	if l.CPU > 0 {
		// Soft limit sends SIGXCPU, the hard one a second later SIGKILL.
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: uint64(l.CPU), Max: uint64(l.CPU) + 1}); err != nil {
			return wrap("rlimit cpu", err)
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
			return wrap("rlimit fsize", err)
		}
	}
	return nil
}

// dropCapabilities empties the bounding, ambient and inheritable sets, so that a
// server running as root still execs the command without any capability (no
// CAP_DAC_OVERRIDE, CAP_SYS_TIME, CAP_CHOWN, CAP_KILL...). A uid 0 still owns
// root's files: Landlock is what keeps those out of reach.
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

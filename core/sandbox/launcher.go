package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// LauncherArg is the first argument that makes the server binary act as the
// launcher: main must call LauncherMain when os.Args[1] == LauncherArg.
const LauncherArg = "__sandbox"

// launchSpec is what Run sends to the launcher on fd 3 (JSON).
type launchSpec struct {
	Argv, Exec       []string
	Dir              string
	ReadOnly         bool
	ExtraRW, ExtraRO []string
	Memory, CPU      int64
	FileSize         int64
	Network          bool
	Landlock         bool
	ABI              int
}

const (
	specFD   = 3 // launchSpec JSON, read to EOF
	statusFD = 4 // close-on-exec: EOF means the exec succeeded, bytes are an error
	// launchFailed is the launcher's exit code when it could not start the command.
	launchFailed = 125
	maxOpenFiles = 1024
)

// LauncherMain is the launcher: it reads the spec, sets rlimits, drops every
// capability, sets no_new_privs, applies Landlock and execs the command. It only
// returns (an exit code) when that fails, after reporting the error to Run.
func LauncherMain(_ []string) int {
	// prctl, capabilities and Landlock are per thread: do them all on the thread
	// that calls execve.
	runtime.LockOSThread()
	status := os.NewFile(statusFD, "status")
	fail := func(err error) int {
		if status != nil {
			fmt.Fprint(status, err.Error())
		}
		return launchFailed
	}
	unix.CloseOnExec(statusFD)
	var l launchSpec
	spec := os.NewFile(specFD, "spec")
	if spec == nil {
		return fail(fmt.Errorf("no spec"))
	}
	b, err := io.ReadAll(io.LimitReader(spec, 1<<20))
	spec.Close()
	if err != nil || json.Unmarshal(b, &l) != nil || len(l.Argv) == 0 {
		return fail(fmt.Errorf("bad launch spec"))
	}
	if err := dropCapabilities(); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("no_new_privs: %w", err))
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
	return fail(fmt.Errorf("exec: %w", errno))
}

// setLimits sets the rlimits that the command inherits across execve.
func setLimits(l *launchSpec) error {
	set := func(res int, v uint64) error {
		return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
	}
	if err := set(unix.RLIMIT_CORE, 0); err != nil {
		return fmt.Errorf("rlimit core: %w", err)
	}
	if err := set(unix.RLIMIT_NOFILE, maxOpenFiles); err != nil {
		return fmt.Errorf("rlimit nofile: %w", err)
	}
	if l.Memory > 0 {
		if err := set(unix.RLIMIT_AS, uint64(l.Memory)); err != nil {
			return fmt.Errorf("rlimit as: %w", err)
		}
	}
	if l.CPU > 0 {
		// Soft limit sends SIGXCPU, the hard one a second later SIGKILL.
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: uint64(l.CPU), Max: uint64(l.CPU) + 1}); err != nil {
			return fmt.Errorf("rlimit cpu: %w", err)
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
			return fmt.Errorf("rlimit fsize: %w", err)
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
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		for c := 0; c <= 63; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
				return fmt.Errorf("capbset drop: %w", err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("ambient: %w", err)
	}
	for i := range data {
		data[i].Inheritable = 0
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

package launch

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// System locations the tools read: libraries, locale, CA certificates, resolver files.
// Not /etc as a whole (shadow, server configuration), not /proc, not /home, not /root.
var (
	roDirs  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc/ssl", "/etc/ca-certificates", "/etc/alternatives"}
	roFiles = []string{"/etc/ld.so.cache", "/etc/localtime", "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf",
		"/etc/host.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols", "/etc/magic", "/etc/mime.types", "/etc/locale.alias",
		"/dev/zero", "/dev/urandom", "/dev/random"}
)

// Landlock is driven with raw system calls (golang.org/x/sys/unix): go-landlock's
// syscall package needs libcap/psx, which is not in go.sum, and the launcher does not
// need multi-thread enforcement: it locks its OS thread, restricts that thread and
// execs from it, so the command inherits exactly that domain.

// handledFS is every filesystem right the kernel knows at abi.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 9:
		return 1<<17 - 1
	case abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	}
	return 1<<13 - 1
}

const (
	readDir  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	readFile = unix.LANDLOCK_ACCESS_FS_READ_FILE
	execFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE
)

// writeDir is what a writable zone grants: everything but execute, FIFOs, device
// nodes, sockets, device ioctls and UNIX socket connects; refer (cross-directory rename)
// and truncate only where the kernel knows them.
func writeDir(abi int) uint64 {
	a := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		a |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		a |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return a
}

// ABI asks the kernel for its Landlock ABI version.
func ABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// restrict applies Landlock to the calling OS thread (locked by the launcher) for
// spec l. no_new_privs must already be set (the launcher does it first).
func restrict(l *Spec) error {
	abi := l.ABI
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(abi)}
	size := 8
	if abi >= 4 {
		size = 16
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP
		if !l.Network {
			attr.Handled_access_net |= unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	if abi >= 6 {
		size = 24
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	if abi >= 10 {
		size = int(unsafe.Sizeof(attr))
		if !l.Network {
			attr.Handled_access_net |= unix.LANDLOCK_ACCESS_NET_BIND_UDP | unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP
		}
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), uintptr(size), 0)
	if errno != 0 {
		return wrap("landlock_create_ruleset", errno)
	}
	defer unix.Close(int(fd))
	rw, dirAccess := writeDir(abi), uint64(readDir)
	if !l.ReadOnly {
		dirAccess = rw
	}
	devNull := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE)
	if abi >= 3 {
		devNull |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	rules := []struct {
		access   uint64
		paths    []string
		optional bool
	}{
		{readDir, roDirs, true},
		{readFile, roFiles, true},
		{devNull, []string{"/dev/null"}, false},
		{dirAccess, []string{l.Dir}, false},
		{rw, l.ExtraRW, false},
		{readDir, l.ExtraRO, false},
		// The server expanded Exec (interpreters included) and kept only existing files.
		{execFile, l.Exec, false},
	}
	for _, r := range rules {
		for _, p := range r.paths {
			if err := addRule(int(fd), p, r.access); err != nil {
				if r.optional && errors.Is(err, unix.ENOENT) {
					continue
				}
				return err
			}
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return wrap("landlock_restrict_self", errno)
	}
	return nil
}

// ruleError is a failed rule: the text says which step, Unwrap keeps the errno
// (ENOENT makes an optional system path skippable).
type ruleError struct {
	step  string
	errno error
}

func (e *ruleError) Error() string { return e.step + ": " + e.errno.Error() }
func (e *ruleError) Unwrap() error { return e.errno }

// addRule allows access beneath path (a directory) or to path (a file: only the
// file rights of access apply).
func addRule(rulesetFD int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return &ruleError{"landlock rule", err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= execFile | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return &ruleError{"landlock_add_rule", errno}
	}
	return nil
}

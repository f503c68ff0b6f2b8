package launch

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter is the part of the kernel layer that does not depend on
// Landlock: it is installed in every mode (off included) on the launcher thread
// that forks the command, so the command and everything it starts inherit it.
// It is hand-assembled classic BPF (a few dozen instructions, no library):
//
//   - a foreign architecture (i386 or x32 system calls on x86-64) kills the process,
//     so the 32-bit socketcall and friends cannot go around the rules;
//   - socket(): with the network off, every family is refused (AF_UNIX included: no
//     connect to a host UNIX socket, no datagram to /dev/log); with it on, only
//     AF_INET and AF_INET6 (what curl and wget need);
//   - io_uring_setup (its requests bypass the socket rule) and openat2 (its mode is
//     behind a pointer) are refused, as are process_vm_readv/writev;
//   - mknod/mknodat are refused: no FIFO, device or socket file in a zone;
//   - chmod, fchmod, fchmodat, fchmodat2 and every call that creates a file or a
//     directory with a mode (open, openat, creat, mkdir, mkdirat) are refused when
//     the mode has a set-user-id, set-group-id or sticky bit, whatever the tool
//     (unzip -K, tar -p, cp --preserve, install -m);
//   - the launcher cannot be signalled or traced by what it started (it must outlive
//     the command to kill its descendants): kill of its pid, its group, 0 or -1,
//     tgkill, rt_(tg)sigqueueinfo and pidfd_open of its pid, tkill and
//     pidfd_send_signal are refused, and ptrace allows only PTRACE_TRACEME (and the
//     launcher's own PTRACE_DETACH).
//
// A refusal is an errno (EACCES for sockets, EPERM otherwise), so tools report
// "Permission denied" / "Operation not permitted" instead of dying.

// rule is one system call the filter matches: always, or when argument arg
// (its low 32 bits) has a bit of mask set, is none of allow, or is one of deny.
type rule struct {
	nr    uint32
	arg   uint32
	mask  uint32   // match when arg & mask != 0 (0: no argument test)
	allow []uint32 // match when arg is none of these (nil: no argument test)
	deny  []uint32 // match when arg is one of these (nil: no argument test)
	errno unix.Errno
}

// specialModeBits are S_ISUID, S_ISGID and S_ISVTX.
const specialModeBits = unix.S_ISUID | unix.S_ISGID | unix.S_ISVTX

// rules is the filter for one command started by the launcher whose pid is self:
// common calls plus the architecture's legacy calls (legacyRules, per GOARCH).
func rules(network bool, self int) []rule {
	me, group := uint32(self), uint32(-int32(self))
	r := []rule{
		{nr: unix.SYS_KILL, deny: []uint32{me, group, 0, ^uint32(0)}, errno: unix.EPERM},
		{nr: unix.SYS_TGKILL, deny: []uint32{me}, errno: unix.EPERM},
		{nr: unix.SYS_RT_SIGQUEUEINFO, deny: []uint32{me}, errno: unix.EPERM},
		{nr: unix.SYS_RT_TGSIGQUEUEINFO, deny: []uint32{me}, errno: unix.EPERM},
		{nr: unix.SYS_PIDFD_OPEN, deny: []uint32{me}, errno: unix.EPERM},
		{nr: unix.SYS_TKILL, errno: unix.EPERM},
		{nr: unix.SYS_PIDFD_SEND_SIGNAL, errno: unix.EPERM},
		// The launcher itself detaches the command (its thread carries the filter too).
		{nr: unix.SYS_PTRACE, allow: []uint32{unix.PTRACE_TRACEME, unix.PTRACE_DETACH}, errno: unix.EPERM},
		{nr: unix.SYS_IO_URING_SETUP, errno: unix.EPERM},
		{nr: unix.SYS_OPENAT2, errno: unix.ENOSYS}, // libc falls back to openat
		{nr: unix.SYS_PROCESS_VM_READV, errno: unix.EPERM},
		{nr: unix.SYS_PROCESS_VM_WRITEV, errno: unix.EPERM},
		{nr: unix.SYS_MKNODAT, errno: unix.EPERM},
		{nr: unix.SYS_FCHMOD, arg: 1, mask: specialModeBits, errno: unix.EPERM},
		{nr: unix.SYS_FCHMODAT, arg: 2, mask: specialModeBits, errno: unix.EPERM},
		{nr: unix.SYS_FCHMODAT2, arg: 2, mask: specialModeBits, errno: unix.EPERM},
		{nr: unix.SYS_OPENAT, arg: 3, mask: specialModeBits, errno: unix.EPERM},
		{nr: unix.SYS_MKDIRAT, arg: 2, mask: specialModeBits, errno: unix.EPERM},
	}
	sock := rule{nr: unix.SYS_SOCKET, errno: unix.EACCES}
	if network {
		sock.allow = []uint32{unix.AF_INET, unix.AF_INET6}
	}
	return append(append(r, sock), legacyRules...)
}

// BPF offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// x32Bit marks x32 system call numbers on x86-64.
const x32Bit = 0x40000000

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// assemble builds the program for rs on the architecture auditArch.
func assemble(rs []rule, auditArch uint32) []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		ja   = unix.BPF_JMP | unix.BPF_JA
	)
	p := []unix.SockFilter{
		stmt(ld, offArch),
		jump(jeq, auditArch, 1, 0),
		stmt(ret, unix.SECCOMP_RET_KILL_PROCESS),
		stmt(ld, offNr),
		jump(jge, x32Bit, 0, 1),
		stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)),
	}
	for _, r := range rs {
		deny := stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(r.errno))
		argLo := offArgs + 8*r.arg // little-endian: the low word comes first
		switch {
		case r.mask != 0:
			// ld nr; jeq nr ? next : skip 3; ld arg; jset mask ? deny : skip 1; deny
			p = append(p, stmt(ld, offNr), jump(jeq, r.nr, 0, 3), stmt(ld, argLo), jump(jset, r.mask, 0, 1), deny)
		case r.deny != nil:
			// ld nr; jeq nr ? next : skip all; ld arg; jeq denied ? deny; ja over deny; deny
			n := uint8(len(r.deny))
			p = append(p, stmt(ld, offNr), jump(jeq, r.nr, 0, n+3), stmt(ld, argLo))
			for i, v := range r.deny {
				p = append(p, jump(jeq, v, n-uint8(i), 0))
			}
			p = append(p, stmt(ja, 1), deny)
		case r.allow != nil:
			// ld nr; jeq nr ? next : skip all; ld arg; jeq allowed ? skip to end; deny
			n := uint8(len(r.allow))
			p = append(p, stmt(ld, offNr), jump(jeq, r.nr, 0, n+2), stmt(ld, argLo))
			for i, v := range r.allow {
				p = append(p, jump(jeq, v, n-uint8(i), 0))
			}
			p = append(p, deny)
		default:
			p = append(p, stmt(ld, offNr), jump(jeq, r.nr, 0, 1), deny)
		}
	}
	return append(p, stmt(ret, unix.SECCOMP_RET_ALLOW))
}

// installSeccomp applies the filter to the calling thread (no_new_privs must be set).
func installSeccomp(network bool) error {
	prog := assemble(rules(network, os.Getpid()), auditArch)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return wrap("seccomp", err)
	}
	return nil
}

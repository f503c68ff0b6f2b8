package launch

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// legacyRules are the x86-64 system calls that arm64 only has as *at variants.
var legacyRules = []rule{
	{nr: unix.SYS_MKNOD, errno: unix.EPERM},
	{nr: unix.SYS_CHMOD, arg: 1, mask: specialModeBits, errno: unix.EPERM},
	{nr: unix.SYS_OPEN, arg: 2, mask: specialModeBits, errno: unix.EPERM},
	{nr: unix.SYS_CREAT, arg: 1, mask: specialModeBits, errno: unix.EPERM},
	{nr: unix.SYS_MKDIR, arg: 1, mask: specialModeBits, errno: unix.EPERM},
}

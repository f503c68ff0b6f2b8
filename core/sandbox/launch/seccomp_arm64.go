package launch

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// legacyRules: arm64 has only the *at system calls, which rules covers.
var legacyRules []rule

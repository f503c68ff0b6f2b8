package core

import (
	"context"
	"time"

	"github.com/fileshed/fileshed/core/sandbox"
	"golang.org/x/sys/unix"
)

// BeginShutdown turns readiness off: the server is draining its calls and a load balancer
// should send new ones elsewhere.
func (s *Service) BeginShutdown() { s.draining.Store(true) }

// Readiness reports whether this server should receive calls, with the details an operator
// needs: the command sandbox, the state database, a writable storage directory, and
// whether the server is draining.
func (s *Service) Readiness(ctx context.Context) (bool, map[string]any) {
	sb := s.SandboxStatus()
	ok, _ := sb["ready"].(bool)
	details := map[string]any{"sandbox": sb}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		ok = false
		details["database"] = "not answering"
	} else {
		details["database"] = "ok"
	}
	// access(2) answers from the permissions and the mount (EROFS) without writing: a probe
	// every few seconds must not churn files in the storage directory.
	if err := unix.Access(s.base, unix.W_OK); err != nil {
		ok = false
		details["storage"] = "not writable"
	} else {
		details["storage"] = "writable"
	}
	if s.draining.Load() {
		ok = false
		details["draining"] = true
	}
	return ok, details
}

// SandboxStatus reports the kernel layer for shed_allowed_commands and /readyz: the
// exec_sandbox mode, the Landlock probe, and whether commands can run at all
// (ready is false when exec_sandbox=required and Landlock is unavailable).
func (s *Service) SandboxStatus() map[string]any {
	pr := sandbox.Detect()
	mode := sandbox.Mode(s.cfg.ExecSandbox)
	return map[string]any{
		"mode":            string(mode),
		"landlock_abi":    pr.LandlockABI,
		"landlock":        pr.Available,
		"enforced":        pr.Available && mode != sandbox.ModeOff,
		"ready":           pr.Available || mode != sandbox.ModeRequired,
		"coverage":        pr.Reason,
		"process_hygiene": "scrubbed environment (HOME outside the zone), stdin /dev/null, only fds 0-2, rlimits (memory, CPU, file size, open files, no core), no capabilities, no_new_privs, seccomp (no sockets unless the network is on, no FIFOs/devices, no set-id bits), every descendant killed when the call ends",
	}
}

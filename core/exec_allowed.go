package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/fileshed/fileshed/core/sandbox"
)

// AllowedCommands answers shed_allowed_commands (reference §5.33): the commands of each
// zone split into installed and missing, what network_mode allows, and what the kernel
// layer enforces on this host. Computed per call (a few stat calls): a valve change is
// never hidden behind a stale cache, unlike the original.
func (s *Service) AllowedCommands(_ context.Context, _ Caller) (Result, error) {
	available, missing := sandbox.Available()
	split := func(kind sandbox.ZoneKind) map[string]any {
		names := sandbox.Allowed(kind)
		a, m := []string{}, []string{}
		for _, n := range names {
			if slices.Contains(available, n) {
				a = append(a, n)
			} else {
				m = append(m, n)
			}
		}
		return map[string]any{"available": a, "missing": m}
	}
	rw := split(sandbox.ReadWrite)
	mode := s.cfg.NetworkMode
	installed := func(n string) bool { return slices.Contains(available, n) }
	network := map[string]any{
		"mode": mode,
		"curl": map[string]any{"installed": installed("curl"), "enabled": mode == "safe" || mode == "all"},
		// wget cannot pin DNS, so safe mode leaves downloads to curl.
		"wget": map[string]any{"installed": installed("wget"), "enabled": mode == "all"},
		// git under shed_exec is read-only whatever the mode (DESIGN §5).
		"git_clone": false, "git_fetch": false, "git_pull": false, "git_push": false,
	}
	total := len(available) + len(missing)
	coverage := 0.0
	if total > 0 {
		coverage = float64(len(available)) * 100 / float64(total)
	}
	data := map[string]any{
		"uploads":   split(sandbox.ReadOnly),
		"storage":   rw,
		"documents": rw,
		"group":     rw,
		"network":   network,
		"sandbox":   s.SandboxStatus(),
		"summary": map[string]any{"total_whitelist": total, "available": len(available), "missing": len(missing),
			"coverage": fmt.Sprintf("%.1f%%", coverage)},
	}
	return Result{Data: data, Message: fmt.Sprintf("%d of %d commands available", len(available), total)}, nil
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

package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sandbox"
)

// AllowedCommands answers shed_allowed_commands (reference §5.33): the commands of each
// zone split into installed and missing, what network_mode allows, and what the kernel
// layer enforces on this host. Computed per call (a few stat calls): a valve change is
// never hidden behind a stale cache, unlike the original.
func (s *Tools) AllowedCommands(_ context.Context, _ core.Caller) (core.Result, error) {
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
	mode := s.Config().NetworkMode
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
	return core.Result{Data: data, Message: fmt.Sprintf("%d of %d commands available", len(available), total)}, nil
}

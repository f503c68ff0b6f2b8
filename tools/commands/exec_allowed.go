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
	split := func(kind sandbox.ZoneKind) zoneCommands {
		names := sandbox.Allowed(kind)
		z := zoneCommands{Available: []string{}, Missing: []string{}}
		for _, n := range names {
			if slices.Contains(available, n) {
				z.Available = append(z.Available, n)
			} else {
				z.Missing = append(z.Missing, n)
			}
		}
		return z
	}
	rw := split(sandbox.ReadWrite)
	mode := s.Config().NetworkMode
	installed := func(n string) bool { return slices.Contains(available, n) }
	network := networkCommands{
		Mode: mode,
		Curl: networkTool{Enabled: mode == "safe" || mode == "all", Installed: installed("curl")},
		// wget cannot pin DNS, so safe mode leaves downloads to curl.
		Wget: networkTool{Enabled: mode == "all", Installed: installed("wget")},
		// git under shed_exec is read-only whatever the mode (DESIGN §5): the git_* fields stay false.
	}
	total := len(available) + len(missing)
	coverage := 0.0
	if total > 0 {
		coverage = float64(len(available)) * 100 / float64(total)
	}
	data := allowedCommands{Documents: rw, Group: rw, Network: network, Sandbox: s.SandboxStatus(), Storage: rw,
		Summary: commandsSummary{Available: len(available), Coverage: fmt.Sprintf("%.1f%%", coverage), Missing: len(missing),
			TotalWhitelist: total},
		Uploads: split(sandbox.ReadOnly)}
	return core.Result{Data: data, Message: fmt.Sprintf("%d of %d commands available", len(available), total)}, nil
}

// allowedCommands is the answer of shed_allowed_commands (fields in the order of the JSON
// keys, alphabetical, as the map it replaces wrote them). sandbox is the kernel's status
// object, shared with the readiness check.
type allowedCommands struct {
	Documents zoneCommands    `json:"documents"`
	Group     zoneCommands    `json:"group"`
	Network   networkCommands `json:"network"`
	Sandbox   map[string]any  `json:"sandbox"`
	Storage   zoneCommands    `json:"storage"`
	Summary   commandsSummary `json:"summary"`
	Uploads   zoneCommands    `json:"uploads"`
}

// zoneCommands are the commands of a zone, installed on this host or not.
type zoneCommands struct {
	Available []string `json:"available"`
	Missing   []string `json:"missing"`
}

// networkCommands is what network_mode allows (fields in the order of the JSON keys); the
// git_* operations are never allowed (git under shed_exec is read-only).
type networkCommands struct {
	Curl     networkTool `json:"curl"`
	GitClone bool        `json:"git_clone"`
	GitFetch bool        `json:"git_fetch"`
	GitPull  bool        `json:"git_pull"`
	GitPush  bool        `json:"git_push"`
	Mode     string      `json:"mode"`
	Wget     networkTool `json:"wget"`
}

// networkTool says whether a download tool is installed and allowed.
type networkTool struct {
	Enabled   bool `json:"enabled"`
	Installed bool `json:"installed"`
}

// commandsSummary counts the whitelist (fields in the order of the JSON keys).
type commandsSummary struct {
	Available      int    `json:"available"`
	Coverage       string `json:"coverage"`
	Missing        int    `json:"missing"`
	TotalWhitelist int    `json:"total_whitelist"`
}

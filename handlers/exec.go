package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

func registerExec(api huma.API, d Deps) {
	s := d.Service
	tool(api, d, toolSpec{name: "shed_exec", summary: "Run a whitelisted command in a zone",
		description: "Runs one command (no shell) in the zone root, sandboxed. success=true means it ran: check data.returncode " +
			"(data.ok). Paths are zone-relative. Save big output with stdout_file. git (documents, group) is read-only. " +
			"See shed_allowed_commands."}, s.Exec)
	tool(api, d, toolSpec{name: "shed_allowed_commands", summary: "Commands available per zone",
		description: "Installed and missing commands per zone, network permissions, and what the sandbox enforces here."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.AllowedCommands(ctx, c)
		})
}

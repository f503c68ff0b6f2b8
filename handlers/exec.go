package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

func registerExec(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_exec", hints: destructive, summary: "Run a whitelisted command in a zone",
		description: "Run one whitelisted command (no shell) in the zone; check data.returncode. Big output: stdout_file."}, s.Commands.Exec)
	tool(api, d, toolSpec{name: "shed_allowed_commands", hints: readOnly, summary: "Commands available per zone",
		description: "Commands available per zone, and the network rules."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Commands.AllowedCommands(ctx, c)
		})
}

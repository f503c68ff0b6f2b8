package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// noArgs is the input of zero-argument tools (no request body in the spec).
type noArgs struct{}

func registerInfo(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_help", hints: readOnly, summary: "Quick reference and guides", specRequired: []string{"howto"},
		description: "Quick reference, or a guide (howto). Call it first."}, s.Info.Help)
	tool(api, d, toolSpec{name: "shed_stats", hints: readOnly, summary: "Usage per zone and quota",
		description: "Usage and quotas per zone and group."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) { return s.Info.Stats(ctx, c) })
	tool(api, d, toolSpec{name: "shed_parameters", hints: readOnly, summary: "Server limits and settings",
		description: "Server limits: quotas, sizes, timeouts, network."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Info.Parameters(ctx, c)
		})
}

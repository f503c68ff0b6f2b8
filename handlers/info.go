package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// noArgs is the input of zero-argument tools (no request body in the spec).
type noArgs struct{}

func registerInfo(api huma.API, d Deps) {
	s := d.Service
	tool(api, d, toolSpec{name: "shed_help", summary: "Quick reference and guides",
		description: "Quick reference of fileshed, or one guide (howto). Call it first when unsure."}, s.Help)
	tool(api, d, toolSpec{name: "shed_stats", summary: "Usage per zone and quota",
		description: "Bytes and files used in uploads, storage and documents, your quota, and the quota of each of your groups."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) { return s.Stats(ctx, c) })
	tool(api, d, toolSpec{name: "shed_parameters", summary: "Server limits and settings",
		description: "Quotas, size and time limits, network mode: what this server allows."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) { return s.Parameters(ctx, c) })
}

package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// registerGroups registers the group space tools (reference §5.40-§5.44).
func registerGroups(api huma.API, d Deps) {
	s := d.Tools
	tool(api, d, toolSpec{name: "shed_group_list", hints: readOnly, summary: "List your groups",
		description: "List your groups (id, name, member count)."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Groups.GroupList(ctx, c)
		})
	tool(api, d, toolSpec{name: "shed_group_info", hints: readOnly, summary: "Group members, files and usage",
		description: "A group's members, files (owner, mode, size) and quota usage."}, s.Groups.GroupInfo)
	tool(api, d, toolSpec{name: "shed_group_set_mode", hints: additive | idempotent, summary: "Change a group file's mode",
		description: "Owner only: set a group file's mode: owner, group or owner_ro (guide: shed_help groups)."}, s.Groups.GroupSetMode)
	tool(api, d, toolSpec{name: "shed_group_chown", hints: additive | idempotent, summary: "Give a group file to another member",
		description: "Owner only: transfer a group file to another member (user id)."}, s.Groups.GroupChown)
	tool(api, d, toolSpec{name: "shed_copy_to_group", hints: destructive, summary: "Copy into a group space",
		description: "Copy a file or folder from uploads/storage/documents into a group space (one commit)."}, s.Groups.CopyToGroup)
}

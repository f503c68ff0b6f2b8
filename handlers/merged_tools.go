package handlers

import "github.com/danielgtaylor/huma/v2"

// registerMerged registers the model-facing tools that stand for several original tools
// (the spec is sent with every chat request: one tool with an action costs a fraction of
// several). The original tools keep their routes; shed_help's guides name both.
func registerMerged(api huma.API, d Deps) {
	merge(api, d, mergedSpec{name: "shed_lockedit", summary: "Locked edit of one file",
		description: "Locked edit: open (lock+content), overwrite (content, append), exec (cmd, args; '.'=the copy), save (message) or cancel; force_unlock",
		actions: []mergedAction{{"open", "shed_lockedit_open"}, {"overwrite", "shed_lockedit_overwrite"},
			{"exec", "shed_lockedit_exec"}, {"save", "shed_lockedit_save"}, {"cancel", "shed_lockedit_cancel"},
			{"force_unlock", "shed_force_unlock"}}})
	merge(api, d, mergedSpec{name: "shed_info", summary: "Usage, limits, commands, maintenance",
		description: "stats: your usage and quotas; parameters: server limits; commands: what shed_exec can run; maintenance: unlock stale, repair",
		actions: []mergedAction{{"stats", "shed_stats"}, {"parameters", "shed_parameters"},
			{"commands", "shed_allowed_commands"}, {"maintenance", "shed_maintenance"}}})
}

package handlers

import "github.com/danielgtaylor/huma/v2"

// registerMerged registers the model-facing tools that stand for several original tools
// (the spec is sent with every chat request: one tool with an action costs a fraction of
// several). The original tools keep their routes; shed_help's guides name both.
func registerMerged(api huma.API, d Deps) {
	merge(api, d, mergedSpec{name: "shed_lockedit", summary: "Locked edit of one file",
		description: "Locked edit: open (lock+content), overwrite (content, append), exec (cmd, args), save, cancel, force_unlock",
		actions: []mergedAction{{"open", "shed_lockedit_open"}, {"overwrite", "shed_lockedit_overwrite"},
			{"exec", "shed_lockedit_exec"}, {"save", "shed_lockedit_save"}, {"cancel", "shed_lockedit_cancel"},
			{"force_unlock", "shed_force_unlock"}}})
	merge(api, d, mergedSpec{name: "shed_info", summary: "Usage, limits, commands, maintenance",
		description: "stats: usage, quotas; parameters: limits; commands: for shed_exec; maintenance: unlock stale, repair",
		actions: []mergedAction{{"stats", "shed_stats"}, {"parameters", "shed_parameters"},
			{"commands", "shed_allowed_commands"}, {"maintenance", "shed_maintenance"}}})
	merge(api, d, mergedSpec{name: "shed_transfer", summary: "Move or copy between zones",
		description: "Move between zones; storage_to_documents and to_group (from src_zone) copy",
		actions: []mergedAction{{"uploads_to_storage", "shed_move_uploads_to_storage"}, {"uploads_to_documents", "shed_move_uploads_to_documents"},
			{"storage_to_documents", "shed_copy_storage_to_documents"}, {"documents_to_storage", "shed_move_documents_to_storage"},
			{"to_group", "shed_copy_to_group"}}})
	merge(api, d, mergedSpec{name: "shed_group", summary: "Group spaces and file ownership",
		description: "Groups: list, info (files, owners, usage), set_mode (path, mode owner|group|owner_ro), chown (path, new_owner)",
		actions: []mergedAction{{"list", "shed_group_list"}, {"info", "shed_group_info"},
			{"set_mode", "shed_group_set_mode"}, {"chown", "shed_group_chown"}}})
	merge(api, d, mergedSpec{name: "shed_archive", summary: "ZIP archives",
		description: "ZIP: zip (src, dest), unzip (src, src_zone, dest; all or nothing, limits) or info (path)",
		actions:     []mergedAction{{"zip", "shed_zip"}, {"unzip", "shed_unzip"}, {"info", "shed_zipinfo"}}})
	merge(api, d, mergedSpec{name: "shed_version", summary: "Changes, undo, history and restore",
		description: "history|restore (hash|HEAD~N) in documents/group; changes|undo|review in any zone: shed_help undo",
		actions: []mergedAction{{"changes", "shed_changes"}, {"undo", "shed_undo"}, {"history", "shed_history"},
			{"restore", "shed_restore"}, {"review", "shed_review"}}})
	merge(api, d, mergedSpec{name: "shed_encryption", summary: "Encryption at rest (storage, uploads)",
		description: "Encrypt storage+uploads at rest: status, setup, migrate old files, disable(confirm)",
		actions: []mergedAction{{"status", "shed_encryption_status"}, {"setup", "shed_encryption_setup"},
			{"migrate", "shed_encryption_migrate"}, {"disable", "shed_encryption_disable"}}})
}

package handlers

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// registerLockedit registers the locked-edit family (open, overwrite, save, cancel,
// force_unlock, maintenance) and the history tools (history, restore).
func registerLockedit(api huma.API, d Deps) {
	s := d.Tools
	maxBody := d.cfg.MaxBodyBytes()
	tool(api, d, toolSpec{name: "shed_lockedit_open", hints: additive, summary: "Lock a file and open a working copy",
		description: "Lock a file for this conversation and return its content; edit the working copy with shed_lockedit_overwrite/exec, then shed_lockedit_save or shed_lockedit_cancel. Other conversations get FILE_LOCKED meanwhile. Zones: storage, documents, group."}, s.Lockedit.LockeditOpen)
	tool(api, d, toolSpec{name: "shed_lockedit_overwrite", hints: destructive, maxBody: maxBody, summary: "Replace or append to the working copy",
		description: "Replace (or append=true: append to) the working copy of a file opened with shed_lockedit_open. The original changes only at shed_lockedit_save."}, s.Lockedit.LockeditOverwrite)
	tool(api, d, toolSpec{name: "shed_lockedit_exec", hints: destructive, summary: "Run a command on the working copy",
		description: "Run a whitelisted command (no shell) on the working copy of a file opened with shed_lockedit_open, e.g. cmd='sed', args=['-i','s/a/b/','.'] ('.' = the copy). It sees only the copy. Check data.returncode."}, s.Lockedit.LockeditExec)
	tool(api, d, toolSpec{name: "shed_lockedit_save", hints: destructive, summary: "Save the working copy and unlock",
		description: "Replace the original with the working copy atomically (committed with message in documents/group), release the lock and close edit mode."}, s.Lockedit.LockeditSave)
	tool(api, d, toolSpec{name: "shed_lockedit_cancel", hints: destructive | idempotent, summary: "Discard the working copy and unlock",
		description: "Discard the working copy of a file opened with shed_lockedit_open and release the lock; the original is unchanged."}, s.Lockedit.LockeditCancel)
	tool(api, d, toolSpec{name: "shed_force_unlock", hints: destructive | idempotent, summary: "Break a lock left by another conversation",
		description: "Release the lock on a file whoever holds it (crash recovery): zone='storage'|'documents', or group. The holder's working copy is kept but can no longer be saved."}, s.Lockedit.ForceUnlock)
	// Not destructive (MCP's sense: nothing can be lost): it removes only what has expired or
	// is orphaned — expired locks and their working copies, which any conversation may take
	// over already, and temporary leftovers — never a file or a live lock (issue 33 item 8).
	tool(api, d, toolSpec{name: "shed_maintenance", hints: additive | idempotent, summary: "Clean expired locks, orphan working copies, repair",
		description: "Release stale locks, reconcile quota, repair repositories."},
		func(ctx context.Context, c core.Caller, _ noArgs) (core.Result, error) {
			return s.Info.Maintenance(ctx, c)
		})
	tool(api, d, toolSpec{name: "shed_history", hints: readOnly, summary: "Versions of a file or folder",
		description: "Commits that changed a path (documents, group)."}, s.Versions.History)
	// Additive: the content it replaces stays in the history (a new commit); the same restore
	// again changes nothing more.
	tool(api, d, toolSpec{name: "shed_restore", hints: additive | idempotent, summary: "Restore an earlier version of a file",
		description: "Restore a file's earlier version (hash or HEAD~N) as a new commit."}, s.Versions.Restore)
	tool(api, d, toolSpec{name: "shed_changes", hints: readOnly, summary: "What a conversation changed",
		description: "This conversation's changes in every zone (conversation='all': every one), newest first; change_id: its diff."}, s.Versions.Changes)
	// Additive: an undo is itself a change, undone in turn (a redo); nothing is lost.
	tool(api, d, toolSpec{name: "shed_undo", hints: additive, summary: "Undo a change",
		description: "Put back what a change (change_id) or this conversation (conversation='this') overwrote, removed or created."}, s.Versions.Undo)
	// Additive: it writes a new page in Storage (output/review-*.md) and a link to it.
	tool(api, d, toolSpec{name: "shed_review", hints: additive, summary: "A page of a conversation's changes",
		description: "A link to a read-only page of this conversation's newest changes with their diffs; show clickable_link."}, s.Pages.Review)
}

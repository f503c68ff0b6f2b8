package core

import (
	"cmp"
	"context"
)

// A command of an encrypted zone (issue 36) runs in the zone's decrypted copy, and its
// changes reach the zone only when the copy is carried back (CommandMirror.WriteBack): they
// are journaled there like a transaction's, one row per path the copy's measures differ in
// (a folder created or removed whole is one row), pending before the write-back and settled
// after it. The zone's files are still as they were when the write-back starts, so every
// row keeps its before-image, sealed like the zone: what such a command modified or removed
// can be undone, unlike in a plain Storage, where nothing is copied before a command runs.

// journal plans the rows of the write-back of the copy measured as after (nil: the zone is
// not journaled, or the command changed nothing).
func (cm *CommandMirror) journal(ctx context.Context, after Snapshot) *txJournal {
	if !cm.s.journaled(cm.z) {
		return nil
	}
	j := &txJournal{s: cm.s, ctx: context.WithoutCancel(ctx), batch: newBatch()}
	for _, p := range changedPaths(cm.before, after) {
		_, had := cm.before.Entries[p]
		_, has := after.Entries[p]
		op := "write"
		switch {
		case !had:
			op = "create"
		case !has:
			op = "delete"
		}
		j.add(cm.c, cmp.Or(cm.c.tool, "shed_exec"), 0, cm.z, p, op, false)
	}
	if len(j.recs) == 0 {
		return nil
	}
	return j
}

package core

import (
	"cmp"
	"context"
	"log/slog"
	"path"
	"sort"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// A writing command's journal (issue 36): nobody can say in advance what a command will
// change, so a placeholder row ("command", the zone's root) is written pending before it
// runs, and replaced when it is settled by one row per path its before/after measures
// differ in (the measures the quota takes anyway: command_quota.go). A folder the command
// created or removed whole is one row, not one per entry below it. In a versioned zone the
// before-images are the commit's parent; in Storage nothing was copied before the command
// ran, so what it modified or removed is recorded without one (undoable: false), while
// what it created can be undone (removed). A server killed during the command leaves the
// placeholder: the recovery settles it as the record of an interrupted command.

// cmdJournal is the journal of one writing command (nil: nothing recorded).
type cmdJournal struct {
	s     *Service
	ctx   context.Context
	z     *Zone
	row   store.JournalEntry
	begun bool
}

// beginCommandJournal writes the placeholder row of cmd, run by c in z, before it runs.
func (s *Service) beginCommandJournal(ctx context.Context, c Caller, z *Zone, cmd Command) (*cmdJournal, error) {
	if cmd.Mirrored || !s.journaled(z) {
		return nil, nil
	}
	j := &cmdJournal{s: s, ctx: context.WithoutCancel(ctx), z: z, row: store.JournalEntry{Batch: newBatch(), Pending: true,
		Replica: confine.Replica(), At: time.Now(), UserID: c.UserID, ConvID: c.ConvID, Tool: cmp.Or(c.tool, "shed_exec"), Owner: z.Owner,
		Zone: z.Label, GroupID: z.GroupID, Op: "command", Dir: true, BytesBefore: -1, BytesAfter: -1, LinesAdded: -1,
		LinesRemoved: -1, NoImage: "the command was interrupted: what it changed is not itemised"}}
	if err := s.db.JournalBegin(ctx, []store.JournalEntry{j.row}); err != nil {
		return nil, Errf(InternalError, "Cannot record the command in the journal before it runs").Because(err).
			WithHint("Retry in a moment; nothing was changed")
	}
	j.begun = true
	return j, nil
}

// settle replaces the placeholder by the paths before and after differ in (nothing when
// the command changed nothing, or its changes were rolled back: changed false). hash is
// its commit in a versioned zone.
func (j *cmdJournal) settle(before, after Snapshot, changed bool, hash string) {
	if j == nil || !j.begun {
		return
	}
	j.begun = false
	var rows []store.JournalEntry
	if changed {
		rows = j.rows(before, after, hash)
	}
	if err := j.s.db.JournalSettle(j.ctx, j.row.Batch, nil, []int{0}, rows); err != nil {
		slog.Warn("journal: settle command", "err", err)
	}
}

// close settles a placeholder Finish did not: kept as the record of a command whose
// changes could not be measured when it ran, dropped when it never ran.
func (j *cmdJournal) close(ran bool) {
	if j == nil || !j.begun {
		return
	}
	if !ran {
		j.settle(Snapshot{}, Snapshot{}, false, "")
		return
	}
	j.begun = false
	e := j.row
	e.Pending, e.NoImage = false, "what the command changed could not be measured"
	if err := j.s.db.JournalSettle(j.ctx, e.Batch, []store.JournalEntry{e}, nil, nil); err != nil {
		slog.Warn("journal: settle command", "err", err)
	}
}

// changedPaths are the paths before and after differ in, sorted: a folder created or
// removed whole stands for the entries below it.
func changedPaths(before, after Snapshot) []string {
	var paths []string
	for p, a := range after.Entries {
		b, ok := before.Entries[p]
		switch {
		case !ok:
			if _, parent := after.Entries[path.Dir(p)]; path.Dir(p) != "." && parent && !inSnap(before, path.Dir(p)) {
				continue // below a folder the command created: that folder's row covers it
			}
		case a.Dir && b.Dir:
			continue
		case a == b:
			continue
		}
		paths = append(paths, p)
	}
	for p := range before.Entries {
		if _, ok := after.Entries[p]; !ok {
			if d := path.Dir(p); d != "." && inSnap(before, d) && !inSnap(after, d) {
				continue // below a folder the command removed
			}
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

// rows are the rows of the paths before and after differ in, numbered from 1.
func (j *cmdJournal) rows(before, after Snapshot, hash string) []store.JournalEntry {
	paths := changedPaths(before, after)
	rows := make([]store.JournalEntry, 0, len(paths))
	for _, p := range paths {
		e := j.row
		e.N, e.Pending, e.Path, e.NoImage = len(rows)+1, false, p, ""
		b, had := before.Entries[p]
		a, has := after.Entries[p]
		switch {
		case !had:
			e.Op = "create"
		case !has:
			e.Op = "delete"
		default:
			e.Op = "write"
		}
		e.Dir = had && b.Dir || has && a.Dir
		if had && !b.Dir && !b.Other {
			e.BytesBefore, e.BeforeIdent = b.Size, "?" // existed: never taken for "absent"
		}
		if has {
			fi := statEntry(j.z, p, false)
			e.AfterIdent, e.BytesAfter = ident(fi), sizeOf(fi)
		}
		switch {
		case !had:
		case j.z.Versioned && hash != "":
			e.Image, e.Commit = imageGit, hash
		case j.z.Versioned:
			e.NoImage = "the change was not committed"
		default:
			e.NoImage = "a command changed it in Storage: no before-image was kept"
		}
		if j.z.Versioned {
			e.Commit = hash
		}
		rows = append(rows, e)
	}
	return rows
}

// inSnap reports whether p is an entry of s.
func inSnap(s Snapshot, p string) bool {
	_, ok := s.Entries[p]
	return ok
}

package core

import (
	"context"
	"log/slog"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// The journal's recovery (issue 36): a server killed between a change's pending row and its
// settlement leaves the row pending. Its path is compared with the identity it had before:
// the same (and, for a rename, the old name still there), the change never happened and the
// row goes; otherwise it happened and the row is settled from what is on disk now (its
// commit, made by the space's recovery, is not known: a versioned zone's row says so). A
// command's or an addition's placeholder is kept as the record of an interrupted change.
// With the SQLite state this runs at start for every pending row; among replicas the
// leader runs it for a dead replica's rows (replicas.go cleanAfter).

// recoverJournal settles the pending rows written by replica ("" = by any).
func (s *Service) recoverJournal(ctx context.Context, replica string) error {
	rows, err := s.db.JournalPending(ctx, replica)
	if err != nil {
		return err
	}
	byBatch := map[string][]store.JournalEntry{}
	var order []string
	for _, e := range rows {
		if byBatch[e.Batch] == nil {
			order = append(order, e.Batch)
		}
		byBatch[e.Batch] = append(byBatch[e.Batch], e)
	}
	for _, b := range order {
		var done []store.JournalEntry
		var drop []int
		for _, e := range byBatch[b] {
			if e, changed := s.settleRecovered(e); changed {
				done = append(done, e)
			} else {
				drop = append(drop, e.N)
			}
		}
		if err := s.db.JournalSettle(ctx, b, done, drop, nil); err != nil {
			return err
		}
	}
	if len(rows) > 0 {
		slog.Info("journal: settled the changes a stopped server left pending", "rows", len(rows))
	}
	return nil
}

// settleRecovered is the settled form of the pending row e, and whether its change happened.
func (s *Service) settleRecovered(e store.JournalEntry) (store.JournalEntry, bool) {
	e.Pending = false
	if e.Op == "command" || e.Op == "add" {
		return e, true // its NoImage already says it was interrupted
	}
	fsys, err := confine.New(s.spaceData(e))
	if err != nil {
		return e, true // cannot look: keep the record, never lose one
	}
	defer fsys.Close()
	z := &Zone{fs: fsys}
	follow := e.Op == "write" || e.Op == "create"
	fi := statEntry(z, e.Path, follow)
	after := ident(fi)
	if after == e.BeforeIdent && (e.OldPath == "" || ident(statEntry(z, e.OldPath, false)) == e.OldIdent) {
		return e, false
	}
	e.AfterIdent, e.BytesAfter = after, sizeOf(fi)
	if e.Image == imageGit {
		e.Image, e.NoImage = "", "committed by the recovery after an unclean stop"
	}
	return e, true
}

// spaceData is the data folder of the zone of row e.
func (s *Service) spaceData(e store.JournalEntry) string {
	l := s.Layout()
	switch e.Zone {
	case "storage":
		return DataDir(l.StorageSpace(e.Owner.ID))
	case "documents":
		return DataDir(l.DocumentsSpace(e.Owner.ID))
	}
	return DataDir(l.GroupSpace(e.Owner.ID))
}

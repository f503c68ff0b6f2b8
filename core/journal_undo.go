package core

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fileshed/fileshed/core/store"
)

// Undo (shed_version action=undo, issue 36): a change's before-image put back through the
// write transaction, so ownership modes, locks, the quota and protected paths apply as to
// any write, and the undo is itself journaled (undo of an undo is a redo): a removed entry
// comes back, a created one goes, a rename is reversed, an overwritten file gets its old
// content; in a versioned zone each step is a new commit. One undo is one batch: undoing
// one of its changes undoes all of it. An undo is refused (UNDO_CONFLICT) when a change it
// does not undo touched a path since, or the path is not what the change left (changed
// outside the journal); force puts the old content back over them.

// undoMark is what the transactions of one undo share (Edit.undo).
type undoMark struct {
	batch string // the undo's own batch
	of    string // the batch the current step reverts
	next  int    // the next row number of the batch
}

// undoRequest is what shed_version undo asks: one change (and its batch), or every change
// of this conversation (conversation "this"); force overrides UNDO_CONFLICT.
type undoRequest struct {
	ChangeID     int64
	Conversation string
	Force        bool
}

// UndoResult is what an undo did: the changes it reverted, newest first, and those of the
// conversation it skipped (not undoable).
type UndoResult struct {
	Undone  []ChangeInfo
	Skipped []ChangeInfo
}

// maxUndo bounds the changes one undo reverts.
const maxUndo = 1000

// Undo reverts for c the change changeID (with the rest of its call), or, with conversation
// "this", every change of c's conversation; force overrides UNDO_CONFLICT.
func (s *Service) Undo(ctx context.Context, c Caller, changeID int64, conversation string, force bool) (UndoResult, error) {
	u := undoRequest{ChangeID: changeID, Conversation: conversation, Force: force}
	var res UndoResult
	set, skipped, err := s.undoSet(ctx, c, u)
	if err != nil {
		return res, err
	}
	for _, e := range skipped {
		res.Skipped = append(res.Skipped, infoOf(c, e))
	}
	if len(set) == 0 {
		return res, Errf(InvalidParameter, "Nothing to undo").
			WithHint("List the changes with shed_version(action='changes'): undone ones and those with undoable=false cannot be undone")
	}
	if !u.Force {
		if err := s.undoConflicts(ctx, c, set); err != nil {
			return res, err
		}
	}
	mark := &undoMark{batch: newBatch()}
	var reverted []int64
	defer func() {
		if len(reverted) > 0 {
			_ = s.db.JournalMarkUndone(context.WithoutCancel(ctx), reverted, mark.batch)
		}
	}()
	for _, e := range set {
		mark.of = e.Batch
		if err := s.undoOne(ctx, c, e, mark); err != nil {
			if len(reverted) > 0 {
				return res, s.putBack(ctx, c, mark.batch, &reverted, err)
			}
			return res, err
		}
		reverted = append(reverted, e.ID)
		res.Undone = append(res.Undone, infoOf(c, e))
	}
	return res, nil
}

// putBack makes an undo that failed (err) after reverting some changes all or nothing: the
// changes of its batch are reverted in turn, newest first (a redo, recorded as such), and
// *reverted emptied. The error says how many changes stay undone: none, unless putting one
// back failed too (then the undo's own changes can be undone by hand: they are listed).
func (s *Service) putBack(ctx context.Context, c Caller, batch string, reverted *[]int64, err error) error {
	ctx = context.WithoutCancel(ctx)
	e, ok := AsError(err)
	if !ok {
		e = Errf(InternalError, "Cannot undo the changes").Because(err)
	}
	done, rerr := s.db.JournalBatch(ctx, batch)
	if rerr != nil {
		return e.With("undone", len(*reverted)).WithHint("The changes undone before this one stay undone: " +
			"list them with shed_version(action='changes') and undo that undo to put them back")
	}
	sort.Slice(done, func(i, j int) bool { return done[i].ID > done[j].ID })
	redo := &undoMark{batch: newBatch(), of: batch}
	var back []int64
	for _, d := range done {
		if perr := s.undoOne(ctx, c, d, redo); perr != nil {
			_ = s.db.JournalMarkUndone(ctx, back, redo.batch)
			return e.With("undone", len(*reverted)).WithHint("The changes undone before this one could not all be put back "+
				"(%s): list them with shed_version(action='changes') and undo that undo", perr.Error())
		}
		back = append(back, d.ID)
	}
	_ = s.db.JournalMarkUndone(ctx, back, redo.batch)
	*reverted = nil
	first := ""
	if e.Hint != "" {
		first = e.Hint + " "
	}
	return e.With("undone", 0).WithHint("%sNothing was undone (an undo is all or nothing): fix this change's cause and undo again", first)
}

// undoSet is what u reverts, newest first, and the conversation's changes it skips.
func (s *Service) undoSet(ctx context.Context, c Caller, u undoRequest) (set, skipped []store.JournalEntry, err error) {
	switch {
	case u.ChangeID != 0:
		e, err := s.change(ctx, c, u.ChangeID)
		if err != nil {
			return nil, nil, err
		}
		if e.UndoneBy != "" {
			return nil, nil, Errf(InvalidParameter, "Change %d is already undone", e.ID).With("change_id", e.ID).
				WithHint("To redo it, undo the undo: its change id is listed by shed_version(action='changes')")
		}
		batch, err := s.db.JournalBatch(ctx, e.Batch)
		if err != nil {
			return nil, nil, Errf(InternalError, "Cannot read the journal").Because(err)
		}
		for _, b := range batch {
			if b.UndoneBy != "" || b.UserID != c.UserID {
				continue
			}
			if ok, why := undoable(b); !ok {
				return nil, nil, Errf(InvalidParameter, "Change %d cannot be undone: %s", b.ID, why).With("change_id", b.ID)
			}
			set = append(set, b)
		}
	case strings.EqualFold(u.Conversation, "this"):
		rows, err := s.db.Journal(ctx, store.JournalQuery{UserID: c.UserID, ConvID: c.ConvID, Limit: maxUndo})
		if err != nil {
			return nil, nil, Errf(InternalError, "Cannot read the journal").Because(err)
		}
		for _, e := range rows {
			if e.UndoneBy != "" || e.Undoes != "" && s.ownUndo(ctx, c, e.Undoes) {
				continue // reverted already, or reverting this conversation's own change
			}
			if ok, _ := undoable(e); !ok {
				skipped = append(skipped, e)
				continue
			}
			set = append(set, e)
		}
	case u.Conversation != "":
		return nil, nil, Errf(InvalidParameter, "Undo takes conversation='this' (this conversation's changes) or a change_id").
			With("conversation", Shorten(u.Conversation))
	default:
		return nil, nil, Errf(MissingParameter, "Undo needs change_id, or conversation='this'").With("parameter", "change_id")
	}
	sort.Slice(set, func(i, j int) bool { return set[i].ID > set[j].ID })
	return set, skipped, nil
}

// ownUndo reports whether the batch an undo reverted was made by c's conversation.
func (s *Service) ownUndo(ctx context.Context, c Caller, batch string) bool {
	rows, err := s.db.JournalBatch(ctx, batch)
	if err != nil || len(rows) == 0 {
		return false
	}
	for _, r := range rows {
		if r.ConvID != c.ConvID || r.UserID != c.UserID {
			return false
		}
	}
	return true
}

// undoConflicts refuses set when a change outside it touched one of its paths since, or a
// path is not what set's newest change of it left. A later change that was undone, and the
// undo that reverted it, cancel out: neither is a conflict.
func (s *Service) undoConflicts(ctx context.Context, c Caller, set []store.JournalEntry) error {
	in := map[int64]bool{}
	for _, e := range set {
		in[e.ID] = true
	}
	var later []map[string]any
	var outside []string
	named := map[int64]bool{}
	checked := map[string]bool{}
	for _, e := range set { // newest first: the first row of a path is its newest change
		for i, p := range []string{e.Path, e.OldPath} {
			if p == "" {
				continue
			}
			rows, err := s.db.JournalLater(ctx, e.Owner, e.Zone, p, e.ID)
			if err != nil {
				return Errf(InternalError, "Cannot read the journal").Because(err)
			}
			undone := map[string]bool{}
			for _, l := range rows {
				if l.UndoneBy != "" {
					undone[l.Batch] = true
				}
			}
			newest, exact := e.ID, e
			for _, l := range rows {
				newest = max(newest, l.ID)
				if l.Path == p && l.ID > exact.ID {
					exact = l
				}
				if in[l.ID] || l.UndoneBy != "" || undone[l.Undoes] || named[l.ID] {
					continue
				}
				named[l.ID] = true
				if len(later) < 20 {
					later = append(later, map[string]any{"id": l.ID, "path": l.Path, "op": l.Op, "by": by(c, l),
						"time": l.At.UTC().Format("2006-01-02T15:04:05Z")})
				}
			}
			key := e.Zone + "\x00" + e.GroupID + "\x00" + p
			if i > 0 || checked[key] || newest != exact.ID || strings.HasPrefix(exact.AfterIdent, "d:") {
				continue // a folder, or changed around it since: the rows above tell
			}
			checked[key] = true
			if s.changedOutside(ctx, c, exact) {
				outside = append(outside, p)
			}
		}
	}
	if len(later) == 0 && len(outside) == 0 {
		return nil
	}
	err := Errf(UndoConflict, "Cannot undo: %d later change(s) and %d path(s) changed since", len(later), len(outside))
	if len(later) > 0 {
		err = err.With("later", later)
	}
	if len(outside) > 0 {
		err = err.With("changed_outside_journal", outside)
	}
	return err
}

// changedOutside reports whether e's path is no longer what e left (a change the journal
// did not see: Uploads, a journal turned off, an operator).
func (s *Service) changedOutside(ctx context.Context, c Caller, e store.JournalEntry) bool {
	z, err := s.journalZone(ctx, c, e, false)
	if err != nil {
		return false // the undo itself will say why it cannot open the zone
	}
	defer z.Close()
	now, nowLink := ident(statEntry(z, e.Path, true)), ident(statEntry(z, e.Path, false))
	return e.AfterIdent != now && e.AfterIdent != nowLink
}

// by is who made e, as the model sees it: this conversation or another.
func by(c Caller, e store.JournalEntry) string {
	if e.ConvID == c.ConvID && e.UserID == c.UserID {
		return "this"
	}
	return "other"
}

// undoOne reverts the change e, as part of the undo mark.
func (s *Service) undoOne(ctx context.Context, c Caller, e store.JournalEntry, mark *undoMark) error {
	z, err := s.journalZone(ctx, c, e, true)
	if err != nil {
		return err
	}
	defer z.Close()
	switch {
	case e.Op == "rename":
		if err := s.undoMove(ctx, c, z, e.Path, e.OldPath, mark); err != nil {
			return err
		}
		if e.BeforeIdent == "" {
			return nil
		}
		return s.undoRestore(ctx, c, z, e, mark)
	case e.BeforeIdent == "":
		return s.undoRemove(ctx, c, z, madeOnlyFor(z, e), mark)
	}
	return s.undoRestore(ctx, c, z, e, mark)
}

// undoEdit is the Edit of one step of an undo.
func undoEdit(e store.JournalEntry, mark *undoMark, steps ...Step) Edit {
	return Edit{Tool: "shed_undo", Message: fmt.Sprintf("Undo change %d (%s %s)", e.ID, e.Op, e.Path), Steps: steps, undo: mark}
}

// undoMove moves from back to to (a rename reversed).
func (s *Service) undoMove(ctx context.Context, c Caller, z *Zone, from, to string, mark *undoMark) error {
	tx, err := s.Begin(ctx, c, undoEdit(store.JournalEntry{Op: "rename", Path: from}, mark,
		Step{Zone: z, Path: from, Op: OpMoveFrom}, Step{Zone: z, Path: to, Op: OpMoveTo}))
	if err != nil {
		return err
	}
	defer tx.Close()
	if tx.Target(1).Exists {
		return Errf(FileExists, "Cannot undo the rename: %s exists again", to).With("path", to).
			WithHint("Rename or delete it first, then undo again")
	}
	if err := tx.reserve(z, -1, Amount{}); err != nil {
		return err
	}
	_, err = tx.Apply(func() (Change, error) {
		if err := tx.r.mkdirAll(ctx, z, path.Dir(to)); err != nil {
			return Change{}, WriteError(err, z, to)
		}
		if err := tx.Fs(z).Rename(from, to); err != nil {
			return Change{}, WriteError(err, z, to)
		}
		return Change{Paths: []string{from, to}}, nil
	})
	return err
}

// undoRemove removes p (a created entry), giving its bytes and names back to the quota.
func (s *Service) undoRemove(ctx context.Context, c Caller, z *Zone, p string, mark *undoMark) error {
	if !EntryExists(z, p) {
		return nil // gone already (forced over a later change)
	}
	tx, err := s.Begin(ctx, c, undoEdit(store.JournalEntry{Op: "create", Path: p}, mark, Step{Zone: z, Path: p, Op: OpRemove}))
	if err != nil {
		return err
	}
	defer tx.Close()
	if err := tx.reserve(z, -1, Amount{}); err != nil {
		return err
	}
	_, err = tx.Apply(func() (Change, error) {
		freed, _ := treeAmount(z, p)
		if err := tx.Fs(z).RemoveAll(p); err != nil {
			return Change{Paths: []string{p}}, WriteError(err, z, p)
		}
		return Change{Paths: []string{p}, Growth: Sub(Amount{}, freed)}, nil
	})
	return err
}

// madeOnlyFor is what undoing the creation e removes: the folder the creation made for it
// when that folder holds nothing else (only e's path and the folders above it), else the
// path itself.
func madeOnlyFor(z *Zone, e store.JournalEntry) string {
	if e.Made == "" || !strings.HasPrefix(e.Path, e.Made+"/") {
		return e.Path
	}
	rest := strings.TrimPrefix(e.Path, e.Made+"/")
	only := true
	_ = walkNames(z, e.Made, func(rel string) error {
		if rel != rest && !strings.HasPrefix(rest, rel+"/") && !strings.HasPrefix(rel, rest+"/") {
			only = false
		}
		return nil
	})
	if !only {
		return e.Path
	}
	return e.Made
}

// treeAmount is what p holds: the bytes of its regular files and its names.
func treeAmount(z *Zone, p string) (Amount, error) {
	fi, _, err := z.fs.LstatIfPossible(p)
	if err != nil {
		return Amount{}, err
	}
	a := Amount{Files: 1}
	if fi.Mode().IsRegular() {
		a.Bytes = fi.Size()
	}
	if fi.IsDir() {
		err = walkNames(z, p, func(rel string) error {
			a.Files++
			if fi, _, err := z.fs.LstatIfPossible(path.Join(p, rel)); err == nil && fi.Mode().IsRegular() {
				a.Bytes += fi.Size()
			}
			return nil
		})
	}
	return a, err
}

// undoRestore puts e's before-image back at its path, over whatever is there.
func (s *Service) undoRestore(ctx context.Context, c Caller, z *Zone, e store.JournalEntry, mark *undoMark) error {
	limit := int64(max(s.cfg.MaxFileSizeMB, s.cfg.Journal.MaxFileMB)) << 20
	img, err := s.openImage(ctx, c, e, limit)
	if err != nil {
		return Errf(InvalidParameter, "Change %d cannot be undone: %v", e.ID, err).With("change_id", e.ID)
	}
	single := !img.dir && len(img.files) == 1 && !img.files[0].Link
	if fi, _, err := z.fs.LstatIfPossible(e.Path); err == nil && (!single || !fi.Mode().IsRegular()) {
		if err := s.undoRemove(ctx, c, z, e.Path, mark); err != nil {
			return err
		}
	}
	if single {
		data := img.files[0].Data
		tx, _, err := s.BeginWrite(ctx, c, z, e.Path, e.Path, undoEdit(e, mark))
		if err != nil {
			return err
		}
		defer tx.Close()
		_, err = tx.WriteFile(Write{Size: int64(len(data)), Body: bytes.NewReader(data)})
		return err
	}
	return s.undoTree(ctx, c, z, e, img, mark)
}

// undoTree makes e's folder (or link) again from its image.
func (s *Service) undoTree(ctx context.Context, c Caller, z *Zone, e store.JournalEntry, img beforeImage, mark *undoMark) error {
	tx, err := s.Begin(ctx, c, undoEdit(e, mark, Step{Zone: z, Path: e.Path, Op: OpMoveTo}))
	if err != nil {
		return err
	}
	defer tx.Close()
	growth := Amount{}
	if img.dir {
		growth.Files++
	}
	for _, f := range img.files {
		growth.Files++
		if !f.Link {
			growth.Bytes += int64(len(f.Data))
		}
	}
	if err := tx.reserve(z, -1, growth); err != nil {
		return err
	}
	_, err = tx.Apply(func() (Change, error) {
		w := tx.Fs(z)
		r := tx.r
		made := Amount{}
		var created []string
		if err := r.mkdirAll(ctx, z, path.Dir(e.Path)); err != nil {
			return Change{}, WriteError(err, z, e.Path)
		}
		if img.dir {
			if err := w.Mkdir(e.Path, 0o700); err != nil {
				return Change{}, WriteError(err, z, e.Path)
			}
			made.Files++
		}
		for _, f := range img.files {
			p := path.Join(e.Path, f.Path)
			// The entry itself (a link) is in the folder made above, outside the paths this
			// transaction writes (the zone's root for a link at the top): only what is
			// below it needs its folders.
			if f.Path != "" {
				if err := w.MkdirAll(path.Dir(p), 0o700); err != nil {
					return Change{Growth: made}, WriteError(err, z, p)
				}
			}
			if f.Link {
				if err := w.SymlinkIfPossible(string(f.Data), p); err != nil {
					return Change{Growth: made}, WriteError(err, z, p)
				}
			} else {
				n, err := w.WriteAtomic(p, bytes.NewReader(f.Data), 0o600)
				made.Bytes += n
				if err != nil {
					return Change{Growth: made}, WriteError(err, z, p)
				}
				created = append(created, p)
			}
			made.Files++
		}
		if err := s.RecordGroupFiles(ctx, c, z, "", created...); err != nil {
			return Change{Paths: []string{e.Path}, Growth: made}, err
		}
		return Change{Paths: []string{e.Path}, Growth: made}, nil
	})
	return err
}

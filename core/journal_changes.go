package core

import (
	"context"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// What the journal tells the model (shed_version changes): a user's changes, this
// conversation's by default, newest first and bounded; one change's diff. Every query is the
// caller's own rows: another user's change ids answer as unknown.

// Bounds of a listing.
const (
	changesDefault = 20
	changesMax     = 200
)

// ChangesQuery selects changes: Conversation "" or "this" is the caller's conversation,
// "all" every conversation of the caller; Zone, Group and Path narrow it.
type ChangesQuery struct {
	Conversation      string
	Zone, Group, Path string
	AllowZoneInPath   bool
	Offset, Limit     int
}

// ChangeInfo is one change as the model sees it.
type ChangeInfo struct {
	ID                       int64
	Time                     time.Time
	Zone, Group              string
	Path, OldPath, Op, Tool  string
	BytesBefore, BytesAfter  int64
	LinesAdded, LinesRemoved int64
	Commit                   string
	// This says the caller's conversation made it.
	This bool
	// Undoable, or Why not; Undone names the undo that reverted it.
	Undoable bool
	Why      string
	Undone   bool
}

// infoOf is e as the model sees it, for caller c.
func infoOf(c Caller, e store.JournalEntry) ChangeInfo {
	ok, why := undoable(e)
	return ChangeInfo{ID: e.ID, Time: e.At, Zone: e.Zone, Group: e.GroupID, Path: e.Path, OldPath: e.OldPath, Op: e.Op,
		Tool: e.Tool, BytesBefore: e.BytesBefore, BytesAfter: e.BytesAfter, LinesAdded: e.LinesAdded,
		LinesRemoved: e.LinesRemoved, Commit: e.Commit, This: e.ConvID == c.ConvID, Undoable: ok, Why: why,
		Undone: e.UndoneBy != ""}
}

// undoable says whether e's change can be put back, or why not.
func undoable(e store.JournalEntry) (bool, string) {
	switch {
	case e.Zone == "uploads":
		return false, "uploads are read-only"
	case e.Op == "command" || e.Op == "add":
		return false, e.NoImage
	case e.BeforeIdent == "" || e.Image != "":
		return true, ""
	case e.NoImage != "":
		return false, e.NoImage
	}
	return false, "no before-image was kept"
}

// journalFilter resolves q's zone, group and path for the caller.
func (s *Service) journalFilter(ctx context.Context, c Caller, q ChangesQuery) (store.JournalQuery, error) {
	jq := store.JournalQuery{UserID: c.UserID}
	switch strings.ToLower(q.Conversation) {
	case "", "this":
		jq.ConvID = c.ConvID
	case "all":
	default:
		return jq, Errf(InvalidParameter, "conversation must be 'this' or 'all'").With("conversation", Shorten(q.Conversation))
	}
	if q.Zone != "" {
		z, err := s.ResolveZone(ctx, c, q.Zone, q.Group, false)
		if err != nil {
			return jq, err
		}
		defer z.Close()
		jq.Zone, jq.GroupID = z.Label, z.GroupID
		if q.Path != "" && q.Path != "." {
			p, err := z.Path(q.Path, q.AllowZoneInPath)
			if err != nil {
				return jq, err
			}
			jq.Path = p
		}
	} else if q.Path != "" && q.Path != "." {
		p, err := confine.Clean(q.Path)
		if err != nil {
			return jq, Errf(InvalidPath, "Invalid path: %q", Shorten(q.Path)).With("path", Shorten(q.Path))
		}
		jq.Path = p
	}
	return jq, nil
}

// Changes lists the caller's changes q selects, newest first, at most q.Limit (1-200,
// default 20) from q.Offset; next is the offset of the next page (0: none).
func (s *Service) Changes(ctx context.Context, c Caller, q ChangesQuery) (changes []ChangeInfo, next int, err error) {
	jq, err := s.journalFilter(ctx, c, q)
	if err != nil {
		return nil, 0, err
	}
	if q.Limit == 0 {
		q.Limit = changesDefault
	}
	if q.Limit < 1 || q.Limit > changesMax || q.Offset < 0 {
		return nil, 0, Errf(InvalidParameter, "limit must be 1-%d and offset at least 0", changesMax).With("limit", q.Limit).With("offset", q.Offset)
	}
	jq.Offset, jq.Limit = q.Offset, q.Limit+1
	rows, err := s.db.Journal(ctx, jq)
	if err != nil {
		return nil, 0, Errf(InternalError, "Cannot read the journal").Because(err)
	}
	if len(rows) > q.Limit {
		rows, next = rows[:q.Limit], q.Offset+q.Limit
	}
	for _, e := range rows {
		changes = append(changes, infoOf(c, e))
	}
	return changes, next, nil
}

// change is the caller's change id (CHANGE not found for another user's).
func (s *Service) change(ctx context.Context, c Caller, id int64) (store.JournalEntry, error) {
	e, ok, err := s.db.JournalByID(ctx, id)
	if err != nil {
		return e, Errf(InternalError, "Cannot read the journal").Because(err)
	}
	if !ok || e.Pending || e.UserID != c.UserID {
		return e, Errf(FileNotFound, "No change %d in your journal", id).With("change_id", id).
			WithHint("List your changes with shed_version(action='changes') (conversation='all' for every conversation)")
	}
	return e, nil
}

// Diff is one change with its unified diff (text) or its sizes (Binary), cut at 16 KiB.
type Diff struct {
	ChangeInfo
	Diff        string
	Binary, Cut bool
	// Unavailable says why the diff cannot be shown (the before-image is gone).
	Unavailable string
}

// ChangeDiff is the change id of the caller with its diff: the before-image against the
// content the change left, which is the next change's before-image or, if none changed the
// path since, what is there now.
func (s *Service) ChangeDiff(ctx context.Context, c Caller, id int64) (Diff, error) {
	e, err := s.change(ctx, c, id)
	if err != nil {
		return Diff{}, err
	}
	d := Diff{ChangeInfo: infoOf(c, e)}
	if e.Dir || e.Op == "command" || e.Op == "add" {
		d.Unavailable = "a folder: list its changes by path"
		return d, nil
	}
	before, err := s.beforeText(ctx, c, e)
	if err != nil {
		d.Unavailable = err.Error()
		return d, nil
	}
	after, err := s.afterText(ctx, c, e)
	if err != nil {
		d.Unavailable = err.Error()
		return d, nil
	}
	if !isText(before) || !isText(after) {
		d.Binary = true
		return d, nil
	}
	d.Diff, d.Cut = unifiedDiff(e.Path, before, after)
	return d, nil
}

// errDiffGone says a side of a diff is not kept.
type errDiffGone string

func (e errDiffGone) Error() string { return string(e) }

// beforeText is the content e's path had before e (nil when absent), at most lineLimit.
func (s *Service) beforeText(ctx context.Context, c Caller, e store.JournalEntry) ([]byte, error) {
	if e.BeforeIdent == "" {
		return nil, nil
	}
	img, err := s.openImage(ctx, c, e, lineLimit)
	if err != nil {
		return nil, err
	}
	if img.dir {
		return nil, errDiffGone("a folder")
	}
	return img.files[0].Data, nil
}

// afterText is what e left at its path: the before-image of the next change of the path,
// or the file now (nil when absent).
func (s *Service) afterText(ctx context.Context, c Caller, e store.JournalEntry) ([]byte, error) {
	if e.AfterIdent == "" {
		return nil, nil
	}
	later, err := s.db.JournalLater(ctx, e.Owner, e.Zone, e.Path, e.ID)
	if err != nil {
		return nil, err
	}
	if len(later) > 0 {
		if l := later[0]; l.Path == e.Path && l.OldPath == "" {
			return s.beforeText(ctx, c, l)
		}
		return nil, errDiffGone("the path changed since in another way")
	}
	z, err := s.journalZone(ctx, c, e, false)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	if ident(statEntry(z, e.Path, true)) != e.AfterIdent && ident(statEntry(z, e.Path, false)) != e.AfterIdent {
		return nil, errDiffGone("the file changed since outside the journal")
	}
	b, err := readAll(z, e.Path)
	if err != nil {
		return nil, errDiffGone("larger than the diff's bound")
	}
	return b, nil
}

// journalZone opens the zone of e for c (write: for an undo).
func (s *Service) journalZone(ctx context.Context, c Caller, e store.JournalEntry, write bool) (*Zone, error) {
	return s.ResolveZone(ctx, c, e.Zone, e.GroupID, write)
}

// AdminChange is one row of `fileshed admin changes`: a change with its conversation.
type AdminChange struct {
	ChangeInfo
	Conversation string
}

// AdminChanges lists user's changes (of conversation conv, "" every one) since since (zero:
// all), newest first (`fileshed admin changes`).
func (s *Service) AdminChanges(ctx context.Context, user, conv string, since time.Time) ([]AdminChange, error) {
	rows, err := s.db.Journal(ctx, store.JournalQuery{UserID: user, ConvID: conv, Since: since})
	if err != nil {
		return nil, err
	}
	out := make([]AdminChange, 0, len(rows))
	for _, e := range rows {
		out = append(out, AdminChange{ChangeInfo: infoOf(Caller{UserID: user}, e), Conversation: e.ConvID})
	}
	return out, nil
}

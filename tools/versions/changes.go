package versions

import (
	"context"
	"fmt"
	"time"

	"github.com/fileshed/fileshed/core"
)

// ChangesInput is the input of shed_changes (shed_version action=changes): this
// conversation's changes, or every conversation's ("all"), narrowed to a zone or a path;
// with change_id, that change's diff.
type ChangesInput struct {
	Zone            string `json:"zone,omitempty"`
	Group           string `json:"group,omitempty"`
	Path            string `json:"path,omitempty"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty"`
	Conversation    string `json:"conversation,omitempty"`
	ChangeID        int64  `json:"change_id,omitempty"`
	Offset          int    `json:"offset,omitempty"`
	Limit           int    `json:"limit,omitempty"`
}

// Changes answers shed_changes: the caller's changes from the journal, newest first,
// bounded (next_offset for the next page); with change_id, its unified diff (text) or its
// sizes (binary), cut at 16 KiB. Read-only.
func (s *Tools) Changes(ctx context.Context, c core.Caller, in ChangesInput) (core.Result, error) {
	if in.ChangeID != 0 {
		d, err := s.ChangeDiff(ctx, c, in.ChangeID)
		if err != nil {
			return core.Result{}, err
		}
		out := changeDiff{Change: changeOf(d.ChangeInfo), Diff: d.Diff, Cut: d.Cut, Binary: d.Binary, Unavailable: d.Unavailable}
		msg := fmt.Sprintf("Change %d: %s %s", d.ID, d.Op, d.Path)
		return core.Result{Data: out, Message: msg}, nil
	}
	list, next, err := s.Kernel.Changes(ctx, c, core.ChangesQuery{Conversation: in.Conversation, Zone: in.Zone, Group: in.Group,
		Path: in.Path, AllowZoneInPath: in.AllowZoneInPath, Offset: in.Offset, Limit: in.Limit})
	if err != nil {
		return core.Result{}, err
	}
	out := changeList{Changes: make([]change, 0, len(list)), Count: len(list), NextOffset: next}
	for _, ch := range list {
		out.Changes = append(out.Changes, changeOf(ch))
	}
	msg := fmt.Sprintf("%d change(s), newest first", len(list))
	if next > 0 {
		msg += fmt.Sprintf("; more with offset=%d", next)
	}
	return core.Result{Data: out, Message: msg}, nil
}

// changeOf is a change as the model sees it: lines for text, sizes otherwise.
func changeOf(ch core.ChangeInfo) change {
	out := change{ID: ch.ID, Time: ch.Time.UTC().Format(time.RFC3339), Zone: ch.Zone, Group: ch.Group, Path: ch.Path,
		OldPath: ch.OldPath, Op: ch.Op, Tool: ch.Tool, By: "other", Undoable: ch.Undoable && !ch.Undone, Why: ch.Why,
		Undone: ch.Undone}
	if ch.This {
		out.By = "this"
	}
	if ch.Undone {
		out.Why = "already undone"
	}
	if ch.LinesAdded >= 0 {
		out.LinesAdded, out.LinesRemoved = ptr(ch.LinesAdded), ptr(ch.LinesRemoved)
	} else {
		if ch.BytesBefore >= 0 {
			out.BytesBefore = ptr(ch.BytesBefore)
		}
		if ch.BytesAfter >= 0 {
			out.BytesAfter = ptr(ch.BytesAfter)
		}
	}
	return out
}

func ptr(n int64) *int64 { return &n }

// UndoInput is the input of shed_undo (shed_version action=undo).
type UndoInput struct {
	ChangeID     int64  `json:"change_id,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Force        bool   `json:"force,omitempty"`
}

// Undo answers shed_undo: one change (with the rest of its call), or all of this
// conversation's changes (conversation='this'), put back newest first through the write
// transaction; UNDO_CONFLICT names the later changes, force overrides it.
func (s *Tools) Undo(ctx context.Context, c core.Caller, in UndoInput) (core.Result, error) {
	res, err := s.Kernel.Undo(ctx, c, in.ChangeID, in.Conversation, in.Force)
	if err != nil {
		return core.Result{}, err
	}
	out := undone{Undone: make([]change, 0, len(res.Undone)), Count: len(res.Undone)}
	for _, ch := range res.Undone {
		ch.Undone = false
		out.Undone = append(out.Undone, changeOf(ch))
	}
	for _, ch := range res.Skipped {
		out.Skipped = append(out.Skipped, changeOf(ch))
	}
	msg := fmt.Sprintf("Undid %d change(s); the undo is itself a change (undo it to redo)", len(res.Undone))
	if len(res.Skipped) > 0 {
		msg += fmt.Sprintf("; %d could not be undone (see skipped)", len(res.Skipped))
	}
	return core.Result{Data: out, Message: msg}, nil
}

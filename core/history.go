package core

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// The quota counts history (DESIGN §5, issue 32 item 8): the objects of an owner's
// repository (its history folder, repo.git/objects, outside the zone's data) are bytes of
// its usage like its files. They are accounted incrementally: each commit charges the bytes
// of the objects it wrote (vcs.Locked.Written: no walk of the repository per write), a
// versioned write reserves the size of its new content for them beforehand (historyEstimate),
// and Reconcile measures the folder. A write refused only because of history packs the
// repository first (packHistory), then retries; the refusal that remains says so.

// historyZone is the versioned space of o, whose history counts against o's quota: a
// user's Documents, a group's zone. It has no file system: only its repository is used.
func (s *Service) historyZone(o store.Owner) *Zone {
	if o.Kind == "group" {
		return &Zone{Kind: GroupZone, Name: "Group:" + o.ID, Label: "group", Versioned: true, GroupID: o.ID, Owner: o,
			Space: s.Layout().GroupSpace(o.ID)}
	}
	return &Zone{Kind: Documents, Name: "Documents", Label: "documents", Versioned: true, Owner: o,
		Space: s.Layout().DocumentsSpace(o.ID)}
}

// gitDir is the repository of the versioned space z, beside its data.
func gitDir(z *Zone) string { return RepoDir(z.Space) }

// HistoryBytes measures o's history: the bytes of its repository's object files (0 when it
// has none yet).
func (s *Service) HistoryBytes(ctx context.Context, o store.Owner) (int64, error) {
	u, err := walkUsage(ctx, vcs.HistoryDir(gitDir(s.historyZone(o))), false, false)
	return u.SizeBytes, err
}

// extraDir is a directory outside the zones whose bytes count against an owner's quota,
// how its paths are shown, and whether its files are encrypted (counted by plaintext).
type extraDir struct {
	zone, dir string
	sealed    bool
}

// ownerExtras are the owner's directories outside its zones that its quota counts (DESIGN
// §5): the history of its versioned space and the editzones of its writable zones.
func (s *Service) ownerExtras(ctx context.Context, o store.Owner) []extraDir {
	h := s.historyZone(o)
	extras := []extraDir{{h.Label + "/history", vcs.HistoryDir(gitDir(h)), false}, {h.Label + "/editzone", EditzonesDir(h.Space), false}}
	if o.Kind == "user" {
		storage := EditzonesDir(s.Layout().StorageSpace(o.ID))
		extras = append(extras, extraDir{"storage/editzone", storage, s.UserKey(ctx, o.ID).State != ""})
	}
	return extras
}

// historyEstimate is what a change of the versioned zone z reserves for the history it will
// add: a new version of the resulting file (size), or of the bytes it adds (growth): at most
// their size once compressed, plus trees and the commit, which the settlement counts
// exactly. A change that adds nothing (a removal, a rename) reserves nothing: it is never
// refused for its few bytes of trees.
func historyEstimate(z *Zone, size int64, growth Amount) int64 {
	if !z.Versioned {
		return 0
	}
	return max(size, growth.Bytes, 0)
}

// historyCharge collects the history a transaction's commit added, settled with its
// reservation when they are of the same owner (Change.charge).
type historyCharge struct {
	owner store.Owner
	bytes int64
}

// chargeHistory charges o's usage with the bytes grown that a commit of z added to its
// history: into ch's reservation when it has one of z's owner, else at once.
func (s *Service) chargeHistory(z *Zone, ch Change, grown int64) {
	if grown == 0 {
		return
	}
	if ch.charge != nil && ch.charge.owner == z.Owner {
		ch.charge.bytes += grown
		return
	}
	// Why a fresh context: the commit is done and the objects are on disk; a failed
	// adjustment is drift that shed_maintenance's reconcile repairs.
	_ = s.db.Adjust(context.Background(), z.Owner, Amount{Bytes: grown})
}

// packHistory packs o's repository (vcs.Locked.Pack) under its repository lock, and adjusts
// o's usage by what the history folder measured before and after: it returns the bytes
// freed. The caller holds o's quota lock shared (no reconcile meanwhile) and no lock of
// a kind ranked after it. No repository, nothing to do.
func (s *Service) packHistory(ctx context.Context, o store.Owner) (int64, error) {
	z := s.historyZone(o)
	if _, err := os.Stat(filepath.Join(gitDir(z), "HEAD")); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	r, err := s.Repo(z)
	if err != nil {
		return 0, err
	}
	defer r.Release()
	l, le, err := s.lockRepo(ctx, r, z)
	if err != nil {
		return 0, err
	}
	defer le.Unlock()
	defer l.Unlock()
	before, err := s.HistoryBytes(ctx, o)
	if err != nil {
		return 0, err
	}
	perr := s.timed("git_pack", func() error { return l.Pack(ctx) })
	after, err := s.HistoryBytes(context.WithoutCancel(ctx), o)
	if err != nil {
		return 0, err
	}
	if d := after - before; d != 0 {
		if err := s.db.Adjust(context.WithoutCancel(ctx), o, Amount{Bytes: d}); err != nil {
			return 0, err
		}
	}
	return before - after, perr
}

// packThenRetry is the last chance of a reservation of o refused with err: when o's
// history is what fills the quota (without it the growth would fit), the history is packed
// and the reservation retried once (retry). It returns the refusal that remains, with the
// history's share in its details.
func (s *Service) packThenRetry(ctx context.Context, o store.Owner, err error, retry func() error) *Error {
	var qe *store.QuotaError
	if !errors.As(err, &qe) || qe.Files() {
		return s.refusal(ctx, o, err)
	}
	history, herr := s.HistoryBytes(ctx, o)
	if herr != nil || history == 0 || qe.Used.Bytes-history+qe.Requested.Bytes > qe.Limit.Bytes {
		return s.refusal(ctx, o, err)
	}
	_, perr := s.packHistory(ctx, o)
	if err = retry(); err == nil {
		return nil
	}
	e := s.refusal(ctx, o, err)
	if perr != nil && e.Err == nil {
		e.Err = perr // logged at the edge: why packing did not help (ErrNoGit: git is not installed)
	}
	return e
}

// refusal turns a failed reservation of o into its answer: QUOTA_EXCEEDED about bytes
// (with the history's share) or names, or the failure to reserve.
func (s *Service) refusal(ctx context.Context, o store.Owner, err error) *Error {
	var qe *store.QuotaError
	if !errors.As(err, &qe) {
		return QuotaErr("Cannot reserve quota", err)
	}
	if qe.Files() {
		return quotaExceeded(qe, o)
	}
	history, herr := s.HistoryBytes(context.WithoutCancel(ctx), o)
	if herr != nil || history == 0 {
		return quotaExceeded(qe, o)
	}
	e := quotaExceeded(qe, o).With("history_bytes", history)
	if qe.Used.Bytes-history+qe.Requested.Bytes > qe.Limit.Bytes {
		return e // the files alone do not fit: the usual answer, with the history's share
	}
	where := "Documents"
	if o.Kind == "group" {
		where = "the group's"
	}
	e.Message = "Quota exceeded by the history of old versions: " + HumanMB(history) + " of the " + HumanMB(qe.Used.Bytes) +
		" used are the history of " + where + " files, " + HumanMB(qe.Requested.Bytes) + " requested, " +
		HumanMB(qe.Limit.Bytes) + " limit"
	return e.WithHint("Every change of a %s file keeps its old version, and the history counts against the quota (history_bytes in shed_info(action='stats')). Deleting files frees their current size, not their history; ask an administrator to raise the quota or to prune the history", where)
}

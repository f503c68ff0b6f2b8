package core

import (
	"context"
	"path"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// checkUnlocked is what every other writer calls before changing a file (patch, delete,
// rename, ...): FILE_LOCKED when another conversation (or another user sharing the
// conversation id "unknown") holds an unexpired locked edit on path; nil when there is no
// lock, when the caller holds it, or when it has expired (an expired lock no longer
// protects anything: a new shed_lockedit_open takes it over). path is zone-relative, as
// returned by z.Path.
func (s *Service) checkUnlocked(ctx context.Context, c Caller, z *Zone, path string) error {
	if z.ReadOnly || path == "" {
		return nil
	}
	l, ok, err := s.db.LockOf(ctx, zoneKey(z), path)
	switch {
	case err != nil:
		return LockErr(path, err)
	case !ok || HeldBy(l, c) || time.Since(l.Since) > s.LockMaxAge():
		return nil
	}
	return s.FileLocked(z, path, l).
		WithHint("Another conversation is editing this file (shed_lockedit(action='open')): wait for it, or use shed_lockedit(action='force_unlock')")
}

// checkTreeUnlocked is checkUnlocked for a file or a whole folder: FILE_LOCKED when
// another conversation holds an unexpired locked edit on rel or below it.
func (s *Service) checkTreeUnlocked(ctx context.Context, c Caller, z *Zone, rel string) error {
	if z.ReadOnly {
		return nil
	}
	locks, err := s.db.LocksUnder(ctx, zoneKey(z), rel)
	if err != nil {
		return LockErr(rel, err)
	}
	for _, l := range locks {
		if !HeldBy(l, c) && time.Since(l.Since) <= s.LockMaxAge() {
			return s.FileLocked(z, l.Path, l).
				WithHint("Another conversation is editing %s (shed_lockedit(action='open')): wait for it, or use shed_lockedit(action='force_unlock')", l.Path)
		}
	}
	return nil
}

// LockMaxAge is lock_max_age_hours as a duration: older locks are taken over by a new
// acquire, do not block other writers, and are released by shed_maintenance.
func (s *Service) LockMaxAge() time.Duration {
	return time.Duration(s.cfg.LockMaxAgeHours) * time.Hour
}

// Editzone opens the conversation's editzone of the zone, confined like a zone (created 0700).
func (s *Service) Editzone(z *Zone, conv string) (*confine.Fs, error) {
	ez, err := confine.New(EditzoneDir(z.Space, conv))
	if err != nil {
		return nil, Errf(InternalError, "Cannot open the editzone of %s", z.Name).Because(err)
	}
	ez.ShareSeal(z.fs) // the working copy of an encrypted file is encrypted too
	return ez, nil
}

// LockDetails fills FILE_LOCKED details: the holding conversation and since when, never the
// holder's name (group zones must not disclose who edits what beyond the conversation).
func LockDetails(e *Error, l store.Lock, maxAge time.Duration) *Error {
	return e.With("locked_by_conversation", l.ConvID).With("since", l.Since.UTC().Format(time.RFC3339)).
		With("locked_at", l.Since.UTC().Format(time.RFC3339)).
		With("expires_at", l.Since.Add(maxAge).UTC().Format(time.RFC3339))
}

// FileLocked is the FILE_LOCKED error for a lock held by someone else.
func (s *Service) FileLocked(z *Zone, p string, l store.Lock) *Error {
	return LockDetails(Errf(FileLocked, "File locked by another conversation: %s", p).With("path", p).With("zone", z.Label), l, s.LockMaxAge())
}

// LockErr wraps a state-database failure on locks.
func LockErr(p string, err error) *Error {
	return Errf(LockError, "Cannot read or record the lock on %s", p).With("path", p).Because(err)
}

// HeldBy reports whether l belongs to the caller (same user and conversation).
func HeldBy(l store.Lock, c Caller) bool { return l.ConvID == c.ConvID && l.UserID == c.UserID }

// RemoveWorkingCopy deletes a working copy and its now-empty parent folders (never the
// editzone itself) and answers the bytes it held (WorkingCopySize). Errors are ignored:
// leftovers are orphans that shed_maintenance removes (the bytes answered are those gone).
func RemoveWorkingCopy(ez *confine.Fs, p string) int64 {
	held := WorkingCopySize(ez, p)
	_ = ez.Remove(p)
	for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if ez.Remove(d) != nil {
			break
		}
	}
	return held - WorkingCopySize(ez, p)
}

package core

import (
	"context"
	"time"
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
		return lockErr(path, err)
	case !ok || heldBy(l, c) || time.Since(l.Since) > s.lockMaxAge():
		return nil
	}
	return s.fileLocked(z, path, l).
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
		return lockErr(rel, err)
	}
	for _, l := range locks {
		if !heldBy(l, c) && time.Since(l.Since) <= s.lockMaxAge() {
			return s.fileLocked(z, l.Path, l).
				WithHint("Another conversation is editing %s (shed_lockedit(action='open')): wait for it, or use shed_lockedit(action='force_unlock')", l.Path)
		}
	}
	return nil
}

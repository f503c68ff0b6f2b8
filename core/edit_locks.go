package core

import (
	"context"
	"errors"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// EditLocks are the edit-lock records (shed_lockedit) of one zone in the state database:
// the kernel keys them by the zone (zoneKey), a family names only paths and conversations.
// These records say who edits a file; the short lock that serialises a file's edit steps
// is LockEdit's.
type EditLocks struct {
	s *Service
	z *Zone
}

// EditLocks are the edit-lock records of z.
func (s *Service) EditLocks(z *Zone) EditLocks { return EditLocks{s, z} }

// Of is the edit lock on p (false: none).
func (e EditLocks) Of(ctx context.Context, p string) (store.Lock, bool, error) {
	return e.s.db.LockOf(ctx, zoneKey(e.z), p)
}

// Acquire records c's edit lock on p, taking over a lock older than lock_max_age_hours:
// FILE_LOCKED (with the holder) when another conversation holds it, LOCK_ERROR when the
// database fails.
func (e EditLocks) Acquire(ctx context.Context, c Caller, p string) error {
	_, err := e.s.db.AcquireLock(ctx, store.Lock{ZoneKey: zoneKey(e.z), Path: p, UserID: c.UserID, ConvID: c.ConvID,
		Since: time.Now()}, e.s.LockMaxAge())
	switch {
	case errors.Is(err, store.ErrLocked):
		held, _, _ := e.Of(ctx, p)
		return e.s.FileLocked(e.z, p, held)
	case err != nil:
		return LockErr(p, err)
	}
	return nil
}

// Release releases the edit lock of conversation conv on p; a lock another conversation
// took over meanwhile is left alone (no error). LOCK_ERROR when the database fails.
func (e EditLocks) Release(ctx context.Context, p, conv string) error {
	if err := e.s.db.ReleaseLock(ctx, zoneKey(e.z), p, conv); err != nil && !errors.Is(err, store.ErrNotHolder) {
		return LockErr(p, err)
	}
	return nil
}

// ForceRelease releases the edit lock on p, whoever holds it (LOCK_ERROR when the database
// fails).
func (e EditLocks) ForceRelease(ctx context.Context, p string) error {
	if err := e.s.db.ForceReleaseLock(ctx, zoneKey(e.z), p); err != nil {
		return LockErr(p, err)
	}
	return nil
}

// Expired are the edit locks of the zone older than lock_max_age_hours (shed_maintenance).
func (e EditLocks) Expired(ctx context.Context) ([]store.Lock, error) {
	all, err := e.s.db.ExpiredLocks(ctx, time.Now().Add(-e.s.LockMaxAge()))
	if err != nil {
		return nil, LockErr("(all)", err)
	}
	var out []store.Lock
	for _, l := range all {
		if l.ZoneKey == zoneKey(e.z) {
			out = append(out, l)
		}
	}
	return out, nil
}

package lockedit

import (
	"context"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/store"
)

// Locks in group spaces: a locked edit there could be broken by any member with
// shed_force_unlock and the file edited at once, so editing could be denied at will. The
// rule: the holder (same user, any conversation) may always release; another member only
// a lock idle for lock_force_after_minutes (no open, overwrite or exec on its working copy
// since); an Open WebUI admin always. Breaking a lock grants nothing else: every later write
// still goes through checkGroupWrite.

// checkForceUnlock refuses, with NOT_LOCK_OWNER, breaking lock l on p in zone z when the
// rule above does not allow c to. nil outside group zones.
func (s *Tools) checkForceUnlock(ctx context.Context, c core.Caller, z *core.Zone, p string, l store.Lock) error {
	if z.Kind != core.GroupZone || l.UserID == c.UserID || c.Role == "admin" {
		return nil
	}
	last := l.Since
	if ez, err := s.Editzone(z, l.ConvID); err == nil {
		if fi, err := ez.Stat(p); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
		_ = ez.Close()
	}
	after := time.Duration(s.Config().LockForceAfterMinutes) * time.Minute
	idle := time.Since(last)
	if idle >= after {
		return nil
	}
	return core.LockDetails(core.Errf(core.NotLockOwner, "Another member is editing %s: its lock can be broken after %d idle minutes", p, s.Config().LockForceAfterMinutes).
		With("path", p).With("zone", z.Label).With("idle_minutes", int(idle/time.Minute)).
		With("force_after_minutes", s.Config().LockForceAfterMinutes).
		With("breakable_at", last.Add(after).UTC().Format(time.RFC3339)), l, s.LockMaxAge()).
		WithHint("Wait until breakable_at, ask the member to save or cancel, or ask an Open WebUI admin")
}

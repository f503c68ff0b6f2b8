package core

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// The guards of a writing command: after it ran, what it was not allowed to change is put
// back or removed before its change is measured and committed — the files other
// conversations hold in locked edits (command_locks.go), in a group zone the files of other
// owners and their SQLite companions (command_owned.go), and the protected names it made
// (protected.go). One guard serves both ends of a command's life: the live command builds it
// from what it noted before it ran (copies of locked files, identities of recorded files, the
// zone's snapshot); the recovery of a command killed with its server (recover_commands.go)
// builds it from the command's record, judging every file against HEAD — the space as the
// command found it. apply is the same code for both.

// guard is what one command, or the dead commands of a space, may not change.
type guard struct {
	s     *Service
	z     *Zone
	locks *lockGuard
	owned *ownedGuard
	// before holds the names the zone held before the command: protected names among them
	// pre-date it and are kept (SweepProtected).
	before Snapshot
	// dead says the guard is a recovery's: a symlink HEAD holds as it is now is not the
	// command's either.
	dead bool
}

// apply runs the guards of g under l, the repository lock (nil outside a versioned zone:
// the ownership guard needs a version to put back, and runs only there), with the zone's
// gate held exclusively. It returns what was put back or removed, the zone measured after
// them, and the first error of a guard (the zone was measured; nothing may be committed), or
// the error of the measure (after is empty then).
func (g *guard) apply(l *vcs.Locked) ([]RevertedFile, Snapshot, error) {
	reverted, firstErr := g.locks.restore(l)
	if l != nil && g.owned != nil {
		r, err := g.owned.restore(l)
		reverted = append(reverted, r...)
		if firstErr == nil {
			firstErr = err
		}
	}
	after, err := TakeSnapshot(g.z.fs.Dir())
	if err == nil {
		before := g.before
		if g.dead {
			before = headLinks(l, before, after)
		}
		if swept := SweepProtected(g.z, before, after); len(swept) > 0 {
			reverted = append(reverted, swept...)
			after, err = TakeSnapshot(g.z.fs.Dir())
		}
	}
	if err != nil {
		return reverted, Snapshot{}, Errf(InternalError, "Cannot measure the %s zone", g.z.Name).Because(err)
	}
	return reverted, after, firstErr
}

// headLinks is before with every symlink of after that HEAD holds as it is: committed so,
// it is not a dead command's.
func headLinks(l *vcs.Locked, before, after Snapshot) Snapshot {
	out := Snapshot{Entries: maps.Clone(before.Entries)}
	for rel, e := range after.Entries {
		if e.Link == "" {
			continue
		}
		if b, err := l.FileAt("HEAD", rel); err == nil && string(b) == e.Link {
			out.Entries[rel] = e
		}
	}
	return out
}

// deadGuard is the guard of the dead commands cmds of z's space, from their records: the
// files one of their callers was not allowed to change (other owners' owner and owner_ro
// files with their companions, files other conversations hold locked) are judged against
// HEAD, and the protected names none of them found in the zone are removed.
func (s *Service) deadGuard(ctx context.Context, z *Zone, cmds []store.Command) (*guard, error) {
	callers := make([]Caller, len(cmds))
	before := Snapshot{Entries: map[string]entry{}}
	for i, c := range cmds {
		callers[i] = Caller{UserID: c.UserID, ConvID: c.ConvID}
		for _, p := range c.Protected {
			before.Entries[p] = entry{Dir: true}
		}
	}
	g := &guard{s: s, z: z, before: before, dead: true}
	locked, err := s.locksAgainst(ctx, z, callers...)
	if err != nil {
		return nil, err
	}
	if len(locked) > 0 {
		g.locks = &lockGuard{z: z, copies: map[string]string{}}
		for p := range locked {
			g.locks.copies[p] = "" // HEAD
		}
	}
	if g.owned, err = s.deadOwned(ctx, z, callers); err != nil {
		return nil, err
	}
	return g, nil
}

// locksAgainst are the unexpired locks of zone z that one of callers does not hold, by
// path: the files a command of theirs may not change.
func (s *Service) locksAgainst(ctx context.Context, z *Zone, callers ...Caller) (map[string]store.Lock, error) {
	all, err := s.db.AllLocks(ctx)
	if err != nil {
		return nil, LockErr(".", err)
	}
	key, m := zoneKey(z), map[string]store.Lock{}
	for _, l := range all {
		if l.ZoneKey == key && time.Since(l.Since) <= s.LockMaxAge() &&
			slices.ContainsFunc(callers, func(c Caller) bool { return !HeldBy(l, c) }) {
			m[l.Path] = l
		}
	}
	return m, nil
}

package core

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
)

// The kernel's locks (DESIGN §9). Every cross-request exclusion is a lock.Key of one of these
// kinds, taken through s.locks with the call's context, so one server (lock.NewLocal) and
// several replicas (a database-backed Locker) share the same rules. Keys are logical — a
// zone's key and a zone-relative path, an owner — never a host path. A holder of several
// keys takes them in the order of lockOrder (keys of one kind sorted among themselves), so
// no two holders ever wait for each other.
const (
	// kindEdit serialises the steps of one locked edit (open, overwrite, save, cancel...).
	kindEdit = "edit"
	// kindTurn is an owner's turn: one writing command, or one decrypted copy, at a time.
	kindTurn = "turn"
	// KindSpace, a space's turn, orders its writing commands, whole-tree changes (both
	// exclusively) and writes (shared).
	KindSpace = "space"
	// kindFile serialises the writers of one file (size read, reservation, write, settle).
	kindFile = "file"
	// kindQuota is an owner's usage: writers hold it shared from reservation to settlement,
	// a reconcile exclusively (it must see the disk with no write in flight).
	kindQuota = "quota"
	// KindGate is a space's gate: held exclusively by holders of the turn from their change
	// to their commit, shared by the writes beside a command of their own process.
	KindGate = "gate"
	// KindRepo is a repository, around the repository's own lock (an in-process mutex and a
	// flock of one host): across replicas this is the authority.
	kindRepo = "repo"
)

// zoneKey is the stable key of a zone's space in the locks table and in lock keys: Storage
// and Documents of one user, and one group, never collide.
func zoneKey(z *Zone) string {
	switch z.Kind {
	case GroupZone:
		return "group:" + z.GroupID
	case Documents:
		return "user:" + z.Owner.ID + ":documents"
	case Uploads:
		return "user:" + z.Owner.ID + ":uploads"
	}
	return "user:" + z.Owner.ID + ":storage"
}

// fileKey is the lock of the writers of rel in z. In Uploads the path is taken from the
// folder of every conversation's uploads, so a conversation's folder and its files share
// their keys with a move of the whole folder.
func fileKey(z *Zone, rel string) lock.Key {
	if z.Kind == Uploads && z.conv != "" {
		rel = z.conv + "/" + rel
	}
	return lock.NewKey(kindFile, zoneKey(z), rel)
}

// editKey is the lock of the steps of one locked edit of p in z.
func editKey(z *Zone, p string) lock.Key { return lock.NewKey(kindEdit, zoneKey(z), p) }

// ownerKey is a lock of kind on an owner (its turn, its quota).
func ownerKey(kind string, o store.Owner) lock.Key { return lock.NewKey(kind, o.Kind, o.ID) }

// spaceKey is a lock of kind (space, gate, repo) on the versioned space of z.
func spaceKey(kind string, z *Zone) lock.Key { return lock.NewKey(kind, zoneKey(z)) }

// Hold takes k in mode m for as long as ctx allows and returns its release (safe to call
// more than once). A wait the call's context ended is TIMEOUT naming what, the other call
// being waited for.
func (s *Service) Hold(ctx context.Context, k lock.Key, m lock.Mode, what string) (func(), error) {
	le, err := s.hold(ctx, k, m, what)
	if err != nil {
		return nil, err
	}
	return le.Unlock, nil
}

// hold is Hold returning the lease, for a holder that checks it before it makes its change
// visible (held.check). The wait is timed (lock_wait).
func (s *Service) hold(ctx context.Context, k lock.Key, m lock.Mode, what string) (lock.Lease, error) {
	var le lock.Lease
	err := s.timed("lock_wait", func() (err error) { le, err = s.locks.Lock(ctx, k, m); return err })
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, waitEnded(ctx, what)
		}
		return nil, Errf(InternalError, "Cannot take the lock of %s", what).Because(err)
	}
	return le, nil
}

// holdLease is Hold returning the lease, for a tool family that makes its change visible
// itself (shed_exec's commit, shed_maintenance's removals and repairs) and checks its leases
// first with CheckLeases.
func (s *Service) holdLease(ctx context.Context, k lock.Key, m lock.Mode, what string) (lock.Lease, error) {
	return s.hold(ctx, k, m, what)
}

// CheckLeases is the write transaction's check (held.check) of leases a tool family holds
// itself: LOCK_ERROR when one was lost, before its change (written false) or before its
// commit (written true).
func CheckLeases(written bool, leases ...lock.Lease) error { return held(leases).check(written) }

// held is what a holder holds: released together (the last taken first), checked together.
type held []lock.Lease

// release releases every lease.
func (h held) release() {
	for i := len(h) - 1; i >= 0; i-- {
		h[i].Unlock()
	}
}

// check answers LOCK_ERROR when a lease was lost (the database session that held it ended:
// another replica may hold the key now), so the holder stops before its change (written
// false) or before its commit (written true). In-process leases are never lost.
func (h held) check(written bool) error {
	for _, le := range h {
		if lock.Held(le) {
			continue
		}
		if !written {
			return Errf(LockError, "The lock of this change was lost before it ran (the state database session that held it ended): nothing was changed").
				WithHint("Retry the call")
		}
		return Errf(LockError, "The lock of this change was lost while it ran (the state database session that held it ended): the change was written but not committed").
			WithHint("Retry the call, or run shed_info(action='maintenance') to commit what was written")
	}
	return nil
}

// holdAll takes keys (exclusively) in the global order, each once; on error nothing is
// held.
func (s *Service) holdAll(ctx context.Context, what string, keys ...lock.Key) (held, error) {
	var h held
	for _, k := range sortKeys(keys) {
		le, err := s.hold(ctx, k, lock.Exclusive, what)
		if err != nil {
			h.release()
			return nil, err
		}
		h = append(h, le)
	}
	return h, nil
}

// lockOrder is the global order of the kinds: a holder never takes a kind ranked lower
// than one it holds.
var lockOrder = map[string]int{kindEdit: 0, kindTurn: 1, kindFile: 2, kindQuota: 3, KindSpace: 4, KindGate: 5, kindRepo: 6}

// sortKeys returns keys in the global order, each once.
func sortKeys(keys []lock.Key) []lock.Key {
	out := slices.Clone(keys)
	slices.SortFunc(out, func(a, b lock.Key) int {
		if c := cmp.Compare(lockOrder[a.Kind()], lockOrder[b.Kind()]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return slices.Compact(out)
}

package core

import (
	"context"

	"github.com/fileshed/fileshed/core/vcs"
)

// Quota after exec (DESIGN §5): a command may write anything inside its zone, so its
// effect on usage is measured, not predicted: the zone's bytes (regular files) before and
// after the command, the owner's usage adjusted by the difference. Adjusting by a delta,
// not storing an absolute total, keeps concurrent writers' reservations intact. Readers
// skip all of it (exec_class.go). Each file the command writes is capped by RLIMIT_FSIZE
// at the owner's remaining quota (and max_file_size_mb), so one command cannot fill the
// disk.
//
// Where the sizes come from: a walk of the zone costs one stat per file (~33 ms at 10,000
// files here, BenchmarkExecQuotaWalk), and a versioned zone's commit after the command
// already stats every file. So in Documents and group zones the commit's scan measures
// the zone (vcs.Measure): "after" is what it found, and "before" is what the index
// recorded at the previous commit — exact as long as every change since went through a
// commit (mutate), which isIndexed tracks: it is dropped by a failed operation or commit
// and by a write under a .git name (which versioning never sees), and set again by a full
// scan that saw the whole tree. Otherwise the zone is walked before, and after when the
// scan did not see everything (a .git folder, a file of 4 GiB or more). In Storage both
// sides are walks; a concurrent write there during the command is counted twice
// (conservative), which shed_maintenance's reconcile repairs.

// fileLimit is the largest file a command may write: the owner's remaining quota,
// at most max_file_size_mb.
func (s *Service) fileLimit(ctx context.Context, z *Zone) (int64, error) {
	if err := s.ensureUsage(ctx, z.Owner); err != nil {
		return 0, Errf(InternalError, "Cannot read the quota").Because(err)
	}
	used, err := s.db.Usage(ctx, z.Owner)
	if err != nil {
		return 0, Errf(InternalError, "Cannot read the quota").Because(err)
	}
	return max(0, min(s.limit(z.Owner)-used, int64(s.cfg.MaxFileSizeMB)<<20)), nil
}

// execQuota is the usage measurement around one command that may write.
type execQuota struct {
	s   *Service
	ctx context.Context
	z   *Zone
	// fromIndex: "before" is the commit's Measure.Before, not a walk.
	fromIndex bool
	before    int64
	// release lets go of the owner's lock, held shared from before the first measurement to
	// the end (quota.go: no Reconcile in between). It is taken before the repository lock,
	// in the same order as every writer (reserve, then mutate), and released after it.
	release func()
	// reconcile asks finish for a full measurement (the index could not weigh the tree).
	reconcile bool
}

// startExecQuota prepares the usage measurement of a command that may write: the owner is
// reconciled first if needed, then its lock is held shared until finish. Call it before
// s.mutate, and finish after.
func (s *Service) startExecQuota(ctx context.Context, z *Zone) (*execQuota, error) {
	if err := s.ensureUsage(ctx, z.Owner); err != nil {
		return nil, Errf(InternalError, "Cannot read the quota").Because(err)
	}
	return &execQuota{s: s, ctx: ctx, z: z, release: s.holdOwner(z.Owner)}, nil
}

// measureBefore takes the "before" measure; in a versioned zone it runs under the
// repository lock (inside mutate), so no other writer of the zone runs until settle.
func (q *execQuota) measureBefore() error {
	if q.z.Versioned && q.s.isIndexed(q.z.space) {
		q.fromIndex = true
		return nil
	}
	u, err := walkUsage(q.z.Fs.Dir())
	if err != nil {
		return Errf(InternalError, "Cannot measure the %s zone", q.z.Name).Because(err)
	}
	q.before = u.SizeBytes
	return nil
}

// settle records what the command changed in the owner's usage, given the measure of the
// commit that followed it (an empty one outside versioned zones); it is Change.Measured.
func (q *execQuota) settle(m vcs.Measure, committed bool) {
	ctx := context.WithoutCancel(q.ctx)
	before, after := q.before, m.After
	if q.fromIndex {
		if !committed || !m.BeforeExact {
			// The index did not weigh the tree (rebuilt after a crash, or the commit
			// failed before reading it): measure the owner from scratch, as
			// shed_maintenance does, once the locks are released (finish). Rare, and the
			// truth rather than a guess.
			q.reconcile = true
			return
		}
		before = m.Before
	}
	if !m.AfterExact {
		u, err := walkUsage(q.z.Fs.Dir())
		if err != nil {
			// Why ignore: the command already ran; drift is repaired by shed_maintenance.
			return
		}
		after = u.SizeBytes
	}
	if d := after - before; d != 0 {
		_ = q.s.db.Adjust(ctx, q.z.Owner, d)
	}
}

// finish releases the owner's lock and runs the full measurement settle asked for.
func (q *execQuota) finish() {
	q.release()
	if q.reconcile {
		_, _ = q.s.Reconcile(context.WithoutCancel(q.ctx), q.z.Owner)
	}
}

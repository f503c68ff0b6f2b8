package core

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// Quota for commands (DESIGN §5): a command may write anything inside its zone, so its
// effect on usage is measured, not predicted, and enforced three times:
//
//   - before: writing commands of one owner run one at a time (Exec holds execOwnerKey),
//     so their measures never overlap and parallel `sed -i` loses no update; the zone is
//     walked into a snapshot (path, size) under the owner's lock (held shared, so no
//     Reconcile runs in between) and, in versioned zones, under the repository lock;
//   - during: each file is capped by RLIMIT_FSIZE at the remaining quota (and
//     max_file_size_mb), and a watchdog (exec_watch.go) kills the command when the zone
//     grows past the remaining quota;
//   - after: the zone is walked again; a command that grew the owner past the quota has
//     its changes rolled back (exec_rollback.go) and answers QUOTA_EXCEEDED; otherwise the
//     owner's usage is adjusted by the difference. Adjusting by a delta, not storing an
//     absolute total, keeps concurrent writers' reservations intact.
//
// The walks cost one stat per file (~33 ms at 10,000 files here, BenchmarkExecQuotaWalk).

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

// execOwnerKey serialises the writing commands of one owner (s.paths).
func execOwnerKey(z *Zone) string { return "exec\x00" + z.Owner.Kind + "\x00" + z.Owner.ID }

// execQuota is the usage measurement around one command that may write.
type execQuota struct {
	s   *Service
	ctx context.Context
	z   *Zone
	// limit and used are the owner's quota and recorded usage (reservations of writes in
	// flight included) when the command started.
	limit, used int64
	before      snapshot
	// start is when the command started (rollback restores what changed since).
	start time.Time
	// release lets go of the owner's lock, held shared from before the first measurement to
	// the end (quota.go: no Reconcile in between). It is taken before the repository lock,
	// in the same order as every writer (reserve, then mutate), and released after it.
	release func()
}

// startExecQuota prepares the usage measurement of a command that may write: the owner is
// reconciled first if needed, then its lock is held shared until finish. Call it before
// s.mutate, and finish after.
func (s *Service) startExecQuota(ctx context.Context, z *Zone) (*execQuota, error) {
	if err := s.ensureUsage(ctx, z.Owner); err != nil {
		return nil, Errf(InternalError, "Cannot read the quota").Because(err)
	}
	return &execQuota{s: s, ctx: ctx, z: z, limit: s.limit(z.Owner), release: s.holdOwner(z.Owner)}, nil
}

// measureBefore reads the owner's usage and takes the zone's snapshot; in a versioned zone
// it runs under the repository lock (inside mutate), so no other writer of the zone runs
// until the command is settled.
func (q *execQuota) measureBefore() error {
	used, err := q.s.db.Usage(q.ctx, q.z.Owner)
	if err != nil {
		return Errf(InternalError, "Cannot read the quota").Because(err)
	}
	if q.before, err = takeSnapshot(q.z.Fs.Dir()); err != nil {
		return Errf(InternalError, "Cannot measure the %s zone", q.z.Name).Because(err)
	}
	q.used, q.start = used, time.Now()
	return nil
}

// over reports whether a zone of size bytes puts the owner over the quota: only growth
// counts (a command that shrinks an owner already over quota is never refused).
func (q *execQuota) over(size int64) bool {
	growth := size - q.before.total
	return growth > 0 && q.used+growth > q.limit
}

// remaining is the growth the command may still add to a zone of size bytes.
func (q *execQuota) remaining(size int64) int64 {
	return q.limit - q.used - (size - q.before.total)
}

// settle records in the owner's usage the difference between the snapshot before the
// command and after, a measure of the zone taken after the command (or its rollback).
func (q *execQuota) settle(after snapshot) {
	if d := after.total - q.before.total; d != 0 {
		// Why ignore the error: the command already ran; drift is repaired by
		// shed_maintenance's reconcile.
		_ = q.s.db.Adjust(context.WithoutCancel(q.ctx), q.z.Owner, d)
	}
}

// overQuota is the answer of a command rolled back for going over the quota.
func (q *execQuota) overQuota(cmd string, peak int64, rb rolledBack) *Error {
	growth := peak - q.before.total
	return Errf(QuotaExceeded, "Quota exceeded: %s grew the %s zone by %s with %s free; its changes were undone",
		cmd, q.z.Name, humanMB(growth), humanMB(max(0, q.limit-q.used))).
		With("command", cmd).With("used", q.used).With("limit", q.limit).With("growth", growth).
		With("rolled_back", rb.details(q.z.Versioned)).
		WithHint("Free space with shed_delete (see shed_stats), or write less (e.g. extract only the files you need)")
}

// finish releases the owner's lock.
func (q *execQuota) finish() { q.release() }

// entry is one name of a zone snapshot.
type entry struct {
	size  int64 // regular files
	dir   bool
	other bool // neither a regular file nor a directory (symlink, FIFO, ...)
	ctime time.Time
}

// snapshot is a zone's names and the total size of its regular files.
type snapshot struct {
	entries map[string]entry
	total   int64
}

// takeSnapshot walks root without following symbolic links. Names that vanish during the
// walk (a command still running) are skipped.
func takeSnapshot(root string) (snapshot, error) {
	s := snapshot{entries: map[string]entry{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d == nil && p == root {
				return fs.SkipAll // the zone does not exist yet
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == root {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		e := entry{dir: d.IsDir(), other: !d.IsDir() && !d.Type().IsRegular(), ctime: ctimeOf(info)}
		if d.Type().IsRegular() {
			e.size = info.Size()
			s.total += e.size
		}
		s.entries[p[len(root)+1:]] = e // below root: root + "/" + rel
		return nil
	})
	return s, err
}

// ctimeOf is the inode change time (set by the kernel on every change, unlike mtime).
func ctimeOf(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return fi.ModTime()
}

package core

import (
	"context"
	"time"

	"github.com/fileshed/fileshed/core/lock"
)

// Quota for commands (DESIGN §5): a command may write anything inside its zone, so its
// effect on usage (bytes, and names: `split -b 1` or `touch` of thousands of empty files
// would exhaust the volume's inodes at no byte cost) is measured, not predicted, and
// enforced three times:
//
//   - before: writing commands of one owner run one at a time (BeginCommand holds the owner's turn),
//     so their measures never overlap and parallel `sed -i` loses no update; the zone is
//     walked into a snapshot (path, size) under the owner's lock (held shared, so no
//     Reconcile runs in between) and, in versioned zones, with the zone's gate held
//     exclusively (every write before it is committed);
//   - during: each file is capped by RLIMIT_FSIZE at the remaining quota (and
//     max_file_size_mb), and a watchdog (tools/commands/exec_watch.go) kills the command when the zone
//     grows past the remaining quota, in bytes or in names;
//   - after: the zone is walked again and the owner's usage read again; the command's growth
//     is the difference of the walks less what single-file writes beside it added (they
//     count their own: beside.go); a command whose growth puts the owner, with
//     everything recorded meanwhile, past the quota has its changes rolled back
//     (command_rollback.go) and answers QUOTA_EXCEEDED; otherwise the owner's usage is
//     adjusted by the growth. Adjusting by a delta, not storing an absolute total, keeps
//     concurrent writers' reservations intact.
//
// The walks cost one stat per file (~33 ms at 10,000 files here, BenchmarkExecQuotaWalk).

// cmdQuota is the usage measurement around one command that may write.
type cmdQuota struct {
	s   *Service
	ctx context.Context
	z   *Zone
	// limit and used are the owner's quota and recorded usage (reservations of writes in
	// flight included) when the command started, then when it ended (measureAfter).
	limit, used Amount
	before      Snapshot
	// beside notes the single-file writes beside the command (versioned zones), others the
	// bytes they added, read by measureAfter.
	beside *BesideRun
	others Amount
	// start is when the command started (rollback restores what changed since).
	start time.Time
	// release lets go of the owner's lock, held shared from before the first measurement to
	// the end (quota.go: no Reconcile in between). It is taken before the repository lock,
	// in the same order as every writer (reserve, then mutate), and released after it.
	release func()
}

// startCmdQuota prepares the usage measurement of a command that may write: the owner is
// reconciled first if needed, then its lock is held shared until finish. Call it before
// the space is held, and finish after.
func (s *Service) startCmdQuota(ctx context.Context, z *Zone) (*cmdQuota, error) {
	if err := s.EnsureUsage(ctx, z.Owner); err != nil {
		return nil, QuotaErr("Cannot read the quota", err)
	}
	release, err := s.HoldOwner(ctx, z.Owner, lock.Shared)
	if err != nil {
		return nil, err
	}
	return &cmdQuota{s: s, ctx: ctx, z: z, limit: s.Limit(z.Owner), release: release}, nil
}

// measureBefore reads the owner's usage and takes the zone's snapshot; in a versioned zone
// it runs with the zone's gate held exclusively (BeginCommand), so no write is half done.
func (q *cmdQuota) measureBefore() error {
	used, err := q.s.db.Usage(q.ctx, q.z.Owner)
	if err != nil {
		return QuotaErr("Cannot read the quota", err)
	}
	if q.before, err = TakeSnapshot(q.z.fs.Dir()); err != nil {
		return Errf(InternalError, "Cannot measure the %s zone", q.z.Name).Because(err)
	}
	q.used, q.start = used, time.Now()
	return nil
}

// measureAfter reads, once the command has ended, the owner's usage (what other writes
// recorded meanwhile included) and what the writes beside it added to the zone.
func (q *cmdQuota) measureAfter() error {
	// The command ran: its settlement happens even when the call's time is up (an encrypted
	// zone's deadline bounds the whole call, issue 24 item 13).
	used, err := q.s.db.Usage(context.WithoutCancel(q.ctx), q.z.Owner)
	if err != nil {
		return QuotaErr("Cannot read the quota", err)
	}
	q.used, q.others = used, q.beside.Grown()
	return nil
}

// growth is what the command added to the zone when it holds now: the writes beside it
// count their own.
func (q *cmdQuota) growth(now Amount) Amount {
	return Sub(Sub(now, q.before.Usage()), q.others)
}

// over reports whether the zone as measured now puts the owner over the quota, in bytes or
// in names: only growth counts (a command that shrinks an owner already over quota is never
// refused).
func (q *cmdQuota) over(now Snapshot) bool {
	return q.overBytes(now.Usage()) || q.overFiles(now.Usage())
}

// overBytes and overFiles report whether a zone holding now puts the owner over one limit.
func (q *cmdQuota) overBytes(now Amount) bool {
	growth := q.growth(now).Bytes
	return growth > 0 && q.used.Bytes+growth > q.limit.Bytes
}

func (q *cmdQuota) overFiles(now Amount) bool {
	growth := q.growth(now).Files
	return growth > 0 && q.used.Files+growth > q.limit.Files
}

// settle records in the owner's usage the command's growth, from a measure of the zone
// taken after the command (or its rollback).
func (q *cmdQuota) settle(after Snapshot) {
	if d := q.growth(after.Usage()); d != (Amount{}) {
		// Why ignore the error: the command already ran; drift is repaired by
		// shed_maintenance's reconcile.
		_ = q.s.db.Adjust(context.WithoutCancel(q.ctx), q.z.Owner, d)
	}
}

// overQuota is the answer of a command rolled back for going over the quota; peak is the
// largest zone measured while it ran.
func (q *cmdQuota) overQuota(cmd string, peak Amount, rb rolledBack) *Error {
	if q.overFiles(peak) && !q.overBytes(peak) {
		growth := q.growth(peak).Files
		return Errf(QuotaExceeded, "File quota exceeded: %s added %d files and folders to the %s zone with %d left; its changes were undone",
			cmd, growth, q.z.Name, max(0, q.limit.Files-q.used.Files)).
			With("command", cmd).With("files_used", q.used.Files).With("files_limit", q.limit.Files).With("files_growth", growth).
			With("rolled_back", rb.details(q.z.Versioned)).
			WithHint("Make fewer files (e.g. larger split chunks, or one archive instead of many small files), or delete files or folders you no longer need with shed_delete")
	}
	growth := q.growth(peak).Bytes
	return Errf(QuotaExceeded, "Quota exceeded: %s grew the %s zone by %s with %s free; its changes were undone",
		cmd, q.z.Name, HumanMB(growth), HumanMB(max(0, q.limit.Bytes-q.used.Bytes))).
		With("command", cmd).With("used", q.used.Bytes).With("limit", q.limit.Bytes).With("growth", growth).
		With("rolled_back", rb.details(q.z.Versioned)).
		WithHint("Free space with shed_delete (see shed_info(action='stats')), or write less (e.g. extract only the files you need)")
}

// finish releases the owner's lock.
func (q *cmdQuota) finish() { q.release() }

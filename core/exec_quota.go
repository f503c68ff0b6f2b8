package core

import (
	"context"
)

// Quota after exec (DESIGN §5): a command may write anything inside its zone, so its
// effect on usage is measured, not predicted. Before the run the zone is walked once
// (bytes of regular files), after it again, and the owner's usage is adjusted by the
// difference: one walk of the zone on each side (BenchmarkExecQuotaWalk: ~1.5 ms for
// 300 files on a loaded 2-CPU test machine). Readers skip both (exec_class.go). Adjusting by a delta, not storing an absolute
// total, keeps concurrent writers' reservations intact; a concurrent write in the same
// zone during the command is counted twice (conservative), which shed_maintenance's
// reconcile repairs. Each file the command writes is capped by RLIMIT_FSIZE at the
// owner's remaining quota (and max_file_size_mb), so one command cannot fill the disk.

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

// zoneBytes measures the zone before a command that may write.
func (s *Service) zoneBytes(ctx context.Context, z *Zone) (int64, error) {
	if err := s.ensureUsage(ctx, z.Owner); err != nil {
		return 0, Errf(InternalError, "Cannot read the quota").Because(err)
	}
	u, err := walkUsage(z.Fs.Dir())
	if err != nil {
		return 0, Errf(InternalError, "Cannot measure the %s zone", z.Name).Because(err)
	}
	return u.SizeBytes, nil
}

// settleExec records what the command changed in the zone's usage.
func (s *Service) settleExec(ctx context.Context, z *Zone, before int64) {
	u, err := walkUsage(z.Fs.Dir())
	if err != nil {
		// Why ignore: the command already ran; drift is repaired by shed_maintenance.
		return
	}
	if d := u.SizeBytes - before; d != 0 {
		_ = s.db.Adjust(context.WithoutCancel(ctx), z.Owner, d)
	}
}

package core

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sync"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
)

// quota is the incremental usage accounting of DESIGN §5: every write reserves its growth
// in the state database before touching the disk (one conditional UPDATE, so concurrent
// writers can never jointly overshoot), then settles the reservation with the real delta.
// Growth is an amount: bytes of regular files, and names (files, folders, links: each takes
// an inode of the shared volume, so an owner's count is bounded by quota_files_per_user or
// quota_files_per_group, issue 24 finding 7).
//
// A measurement of the disk (Reconcile) writes an absolute usage; done while a write is
// between its reservation and its settlement, it would erase that write from the count. So
// each owner has a read-write lock (kindQuota): writers hold it shared from reservation to
// settlement (commands from their first measurement to their last), Reconcile holds it
// exclusively and thus sees the disk with no write in flight.
type quota struct {
	// reconciled remembers the owners whose usage row was checked against the disk in this
	// process (a first-time owner with files on disk is walked once).
	reconciled sync.Map
}

// HoldOwner takes the owner's quota lock in mode m (writers shared, a measure of the disk
// exclusively) and returns its idempotent release. A writer is first noted in this
// replica's journal (replicas.go), so that its death with a reservation in flight is
// repaired for this owner.
func (s *Service) HoldOwner(ctx context.Context, o store.Owner, m lock.Mode) (func(), error) {
	if m == lock.Shared {
		if err := s.noteWriter(ctx, o); err != nil {
			return nil, err
		}
	}
	le, err := s.ownerLease(ctx, o, m)
	if err != nil {
		return nil, err
	}
	return le.Unlock, nil
}

// ownerLease takes o's quota lock in mode m (HoldOwner) and returns its lease.
func (s *Service) ownerLease(ctx context.Context, o store.Owner, m lock.Mode) (lock.Lease, error) {
	return s.hold(ctx, ownerKey(kindQuota, o), m, "another measure of the "+o.Kind+"'s usage")
}

// Amount is a quantity of usage: bytes, and names (store.Amount).
type Amount = store.Amount

// Sub is a - b.
func Sub(a, b Amount) Amount { return Amount{Bytes: a.Bytes - b.Bytes, Files: a.Files - b.Files} }

// Limit is the owner's quota.
func (s *Service) Limit(o store.Owner) Amount {
	if o.Kind == "group" {
		return Amount{Bytes: int64(s.cfg.QuotaPerGroupMB) << 20, Files: int64(s.cfg.QuotaFilesPerGroup)}
	}
	return Amount{Bytes: int64(s.cfg.QuotaPerUserMB) << 20, Files: int64(s.cfg.QuotaFilesPerUser)}
}

// ownerDir is one directory whose regular files count against an owner's quota, and the
// name of its zone (how its paths are shown).
type ownerDir struct{ zone, dir string }

// ownerDirs are the directories of an owner's quota: every personal zone of a user (all
// conversations' uploads included), or a group's data.
func (s *Service) ownerDirs(o store.Owner) []ownerDir {
	l := s.Layout()
	if o.Kind == "group" {
		return []ownerDir{{"group", l.ZoneRoot(o, GroupZone)}}
	}
	return []ownerDir{{"uploads", l.ZoneRoot(o, Uploads)}, {"storage", l.ZoneRoot(o, Storage)},
		{"documents", l.ZoneRoot(o, Documents)}}
}

// EnsureUsage reconciles an owner once per process when its recorded usage holds no name
// (a new owner, or a row written before the file count), so files that pre-date the
// accounting are counted. Callers must not hold the owner's lock.
func (s *Service) EnsureUsage(ctx context.Context, o store.Owner) error {
	if _, done := s.quota.reconciled.Load(o); done {
		return nil
	}
	used, err := s.db.Usage(ctx, o)
	if err != nil {
		return err
	}
	if used.Files == 0 {
		if _, _, err := s.Reconcile(ctx, o); err != nil {
			return err
		}
	}
	s.quota.reconciled.Store(o, true)
	return nil
}

// Reconcile walks the owner's directories once and stores the measured usage (drift repair
// for shed_maintenance and first use), with no write of the owner in flight (quota). It
// returns the measured usage and what the walk could not read ("zone/path: cause"); then
// the recorded usage is kept, as a measure that misses a folder would understate it.
// Callers must not hold the owner's lock. A lock lost during the measure (its database
// session ended: another replica's writer may have reserved meanwhile) keeps the recorded
// usage too, with LOCK_ERROR.
func (s *Service) Reconcile(ctx context.Context, o store.Owner) (Amount, []string, error) {
	le, err := s.ownerLease(ctx, o, lock.Exclusive)
	if err != nil {
		return Amount{}, nil, err
	}
	defer le.Unlock()
	total, unmeasured, err := s.measureOwner(ctx, o)
	if err != nil || len(unmeasured) > 0 {
		return total, unmeasured, err
	}
	if err := (held{le}).check(false); err != nil {
		return total, nil, err
	}
	return total, nil, s.db.SetUsage(ctx, o, total)
}

// measureOwner walks the owner's directories: the usage they hold and what could not be
// read, as "zone/path: cause". The history and the working copies count their bytes
// (ownerExtras), not their names.
func (s *Service) measureOwner(ctx context.Context, o store.Owner) (Amount, []string, error) {
	var total Amount
	var unmeasured []string
	note := func(zone string, u ZoneUsage) {
		for _, p := range u.Unmeasured {
			unmeasured = append(unmeasured, zone+"/"+p)
		}
	}
	for _, d := range s.ownerDirs(o) {
		u, err := s.DirUsage(ctx, o, d.dir)
		if err != nil {
			return Amount{}, nil, err
		}
		total.Bytes += u.SizeBytes
		total.Files += u.Entries
		note(d.zone, u)
	}
	for _, d := range s.ownerExtras(ctx, o) {
		u, err := walkUsage(ctx, d.dir, d.sealed, false)
		if err != nil {
			return Amount{}, nil, err
		}
		total.Bytes += u.SizeBytes
		note(d.zone, u)
	}
	return total, unmeasured, nil
}

// reservation is growth reserved against a quota, holding the owner's lock shared; Settle it
// exactly once, on every path.
type reservation struct {
	s        *Service
	owner    store.Owner
	Reserved Amount
	// made counts the folders mkdirAll created: settled with the write, whatever its fate.
	made    int64
	release func()
}

// CheckSize refuses a resulting file over max_file_size_mb.
func (s *Service) CheckSize(size int64) error {
	if maxSize := int64(s.cfg.MaxFileSizeMB) << 20; size > maxSize {
		return Errf(FileTooLarge, "File would be %d bytes, over the %d MB limit", size, s.cfg.MaxFileSizeMB).
			With("size", size).With("limit", maxSize)
	}
	return nil
}

// reserve checks the file-size limit (size = the resulting file's size, -1 to skip) and
// reserves growth (bytes, and the names the write adds) and history bytes more
// (historyEstimate) for the zone's owner. Nothing touches the disk before this succeeds.
// Refused only because of the owner's history, it packs the history and tries again
// (packThenRetry).
func (s *Service) reserve(ctx context.Context, z *Zone, size int64, growth Amount, history int64) (*reservation, error) {
	if err := s.CheckSize(size); err != nil {
		return nil, err
	}
	// Even without growth: the reservation may grow later (mkdirAll, an import's chunks),
	// when the owner's lock it holds keeps a first-use reconcile from running.
	if err := s.EnsureUsage(ctx, z.Owner); err != nil {
		return nil, QuotaErr("Cannot read the quota", err)
	}
	release, err := s.HoldOwner(ctx, z.Owner, lock.Shared)
	if err != nil {
		return nil, err
	}
	r := &reservation{s: s, owner: z.Owner, release: release}
	want := Amount{Bytes: max(growth.Bytes, 0) + max(history, 0), Files: max(growth.Files, 0)}
	if want.Bytes <= 0 && want.Files <= 0 {
		return r, nil
	}
	if err := r.grow(ctx, want); err != nil {
		if e := s.packThenRetry(ctx, z.Owner, err, func() error { return r.grow(ctx, want) }); e != nil {
			r.release()
			return nil, e
		}
	}
	return r, nil
}

// Grow reserves growth more (QUOTA_EXCEEDED when over the limit, with the history's share
// of the usage).
func (r *reservation) Grow(ctx context.Context, growth Amount) error {
	if err := r.grow(ctx, growth); err != nil {
		return r.s.refusal(ctx, r.owner, err)
	}
	return nil
}

// grow is Grow returning the state database's answer (a *store.QuotaError when refused).
func (r *reservation) grow(ctx context.Context, growth Amount) error {
	if err := r.s.timed("db_quota_reserve", func() error { return r.s.db.Reserve(ctx, r.owner, growth, r.s.Limit(r.owner)) }); err != nil {
		return err
	}
	r.Reserved.Bytes += growth.Bytes
	r.Reserved.Files += growth.Files
	return nil
}

// quotaExceeded is the answer of a refused reservation, about the bytes or the file count.
func quotaExceeded(qe *store.QuotaError, o store.Owner) *Error {
	if qe.Files() {
		return Errf(QuotaExceeded, "File quota exceeded: %d files and folders held, %d more requested, %d allowed",
			qe.Used.Files, qe.Requested.Files, qe.Limit.Files).
			With("files_used", qe.Used.Files).With("files_requested", qe.Requested.Files).With("files_limit", qe.Limit.Files).
			With("owner", o.Kind).
			WithHint("Delete files or folders you no longer need with shed_delete (see shed_info(action='stats')), or keep many small files in one archive")
	}
	return Errf(QuotaExceeded, "Quota exceeded: %s used, %s requested, %s limit", HumanMB(qe.Used.Bytes), HumanMB(qe.Requested.Bytes), HumanMB(qe.Limit.Bytes)).
		With("used", qe.Used.Bytes).With("requested", qe.Requested.Bytes).With("limit", qe.Limit.Bytes).With("owner", o.Kind)
}

// mkdirAll creates the folder dir of z and its missing parents (0700) for the
// reservation's write: the folders it is about to make are reserved first (QUOTA_EXCEEDED
// when they do not fit), and those it made are counted in the settlement.
func (r *reservation) mkdirAll(ctx context.Context, z *Zone, dir string) error {
	fsys := z.fs
	var missing []string
	for d := dir; d != "." && d != "" && d != "/"; d = path.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if len(missing) == 0 {
		return nil
	}
	if err := r.Grow(ctx, Amount{Files: int64(len(missing))}); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		switch err := fsys.Mkdir(missing[i], 0o700); {
		case err == nil:
			r.made++
		case !errors.Is(err, fs.ErrExist):
			return err
		}
	}
	return nil
}

// Settle records the real change of usage (negative for shrinking or deleting; zero after a
// failed write), plus the folders mkdirAll made, in place of the reservation.
func (r *reservation) Settle(ctx context.Context, actual Amount) {
	actual.Files += r.made
	if d := Sub(actual, r.Reserved); d != (Amount{}) {
		// Why ignore the error: the write already happened; a failed adjustment is drift that
		// shed_maintenance's reconcile repairs, and must not turn a done write into a failure.
		_ = r.s.db.Adjust(context.WithoutCancel(ctx), r.owner, d)
	}
	r.Reserved, r.made = actual, 0
	r.release()
}

// QuotaErr is the answer of a failed read or reservation of the quota. A call whose time
// ran out before it got there (it waited behind a slow statement on the same database, or
// another writer of the same file) answers TIMEOUT: nothing is wrong but the wait.
func QuotaErr(what string, err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Errf(Timeout, "%s: the call ran out of time waiting for another call on the same file", what).Because(err).
			WithHint("Retry when the other call has finished (a long SQL statement holds its database until it ends, at most exec_timeout_default seconds)")
	}
	return Errf(InternalError, "%s", what).Because(err)
}

// RemainingQuota is what the zone's owner may still add (0 of what is over the quota).
func (s *Service) RemainingQuota(ctx context.Context, z *Zone) (Amount, error) {
	if err := s.EnsureUsage(ctx, z.Owner); err != nil {
		return Amount{}, QuotaErr("Cannot read the quota", err)
	}
	used, err := s.db.Usage(ctx, z.Owner)
	if err != nil {
		return Amount{}, QuotaErr("Cannot read the quota", err)
	}
	left := Sub(s.Limit(z.Owner), used)
	return Amount{Bytes: max(0, left.Bytes), Files: max(0, left.Files)}, nil
}

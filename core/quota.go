package core

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/fileshed/fileshed/core/store"
)

// quota is the incremental usage accounting of DESIGN §5: every write reserves its growth
// in the state database before touching the disk (one conditional UPDATE, so concurrent
// writers can never jointly overshoot), then settles the reservation with the real delta.
type quota struct {
	// reconciled remembers the owners whose usage row was checked against the disk in this
	// process (a first-time owner with files on disk is walked once).
	reconciled sync.Map
}

// limit is the owner's quota in bytes.
func (s *Service) limit(o store.Owner) int64 {
	if o.Kind == "group" {
		return int64(s.cfg.QuotaPerGroupMB) << 20
	}
	return int64(s.cfg.QuotaPerUserMB) << 20
}

// ownerDirs are the directories whose regular files count against an owner's quota: every
// personal zone of a user (all conversations' uploads included), or a group's data.
func (s *Service) ownerDirs(o store.Owner) []string {
	if o.Kind == "group" {
		return []string{filepath.Join(s.base, "groups", o.ID, "data")}
	}
	u := filepath.Join(s.base, "users", o.ID)
	return []string{filepath.Join(u, "Uploads"), filepath.Join(u, "Storage", "data"), filepath.Join(u, "Documents", "data")}
}

// ensureUsage reconciles an owner once per process when its recorded usage is zero, so
// files that pre-date the accounting are counted. Every writer passes here before reserving,
// and the first one measures under a per-owner lock while the others wait: a measurement
// racing a reservation would overwrite it (two writes could then both fit a quota that
// holds one).
func (s *Service) ensureUsage(ctx context.Context, o store.Owner) error {
	if _, done := s.quota.reconciled.Load(o); done {
		return nil
	}
	unlock := s.paths.Lock("usage\x00" + o.Kind + "\x00" + o.ID)
	defer unlock()
	if _, done := s.quota.reconciled.Load(o); done {
		return nil
	}
	used, err := s.db.Usage(ctx, o)
	if err != nil {
		return err
	}
	if used == 0 {
		if _, err := s.Reconcile(ctx, o); err != nil {
			return err
		}
	}
	s.quota.reconciled.Store(o, true)
	return nil
}

// Reconcile walks the owner's directories once and stores the measured usage (drift repair
// for shed_maintenance and first use). It returns the measured bytes.
func (s *Service) Reconcile(ctx context.Context, o store.Owner) (int64, error) {
	var total int64
	for _, d := range s.ownerDirs(o) {
		u, err := walkUsage(d)
		if err != nil {
			return 0, err
		}
		total += u.SizeBytes
	}
	return total, s.db.SetUsage(ctx, o, total)
}

// Reservation is growth reserved against a quota; Settle it exactly once.
type Reservation struct {
	s        *Service
	owner    store.Owner
	reserved int64
}

// reserve checks the file-size limit (size = the resulting file's size, -1 to skip) and
// reserves growth bytes for the zone's owner. Nothing touches the disk before this succeeds.
func (s *Service) reserve(ctx context.Context, z *Zone, size, growth int64) (*Reservation, error) {
	if maxSize := int64(s.cfg.MaxFileSizeMB) << 20; size > maxSize {
		return nil, Errf(FileTooLarge, "File would be %d bytes, over the %d MB limit", size, s.cfg.MaxFileSizeMB).
			With("size", size).With("limit", maxSize)
	}
	r := &Reservation{s: s, owner: z.Owner}
	if growth <= 0 {
		return r, nil
	}
	if err := s.ensureUsage(ctx, z.Owner); err != nil {
		return nil, Errf(InternalError, "Cannot read the quota").Because(err)
	}
	if err := s.db.Reserve(ctx, z.Owner, growth, s.limit(z.Owner)); err != nil {
		var qe *store.QuotaError
		if errors.As(err, &qe) {
			return nil, Errf(QuotaExceeded, "Quota exceeded: %s used, %s requested, %s limit", humanMB(qe.Used), humanMB(qe.Requested), humanMB(qe.Limit)).
				With("used", qe.Used).With("requested", qe.Requested).With("limit", qe.Limit).With("owner", z.Owner.Kind)
		}
		return nil, Errf(InternalError, "Cannot reserve quota").Because(err)
	}
	r.reserved = growth
	return r, nil
}

// Settle records the real change of usage (negative for shrinking or deleting; 0 after a
// failed write) in place of the reservation.
func (r *Reservation) Settle(ctx context.Context, actual int64) {
	if d := actual - r.reserved; d != 0 {
		// Why ignore the error: the write already happened; a failed adjustment is drift that
		// shed_maintenance's reconcile repairs, and must not turn a done write into a failure.
		_ = r.s.db.Adjust(context.WithoutCancel(ctx), r.owner, d)
	}
	r.reserved = actual
}

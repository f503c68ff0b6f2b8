package info

import (
	"context"
	"fmt"
	"os"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/store"
)

// maintenanceReport is the data of shed_maintenance: the reference's four lists (§5.35, §7;
// corrupted_locks and orphan_ownerships stay empty: locks live in the state database, and
// ownership rows are cleaned by the group tools), plus quota and repositories.
type maintenanceReport struct {
	ExpiredLocks      []string     `json:"expired_locks"`
	CorruptedLocks    []string     `json:"corrupted_locks"`
	OrphanEditzones   []string     `json:"orphan_editzones"`
	OrphanOwnerships  []string     `json:"orphan_ownerships"`
	Quota             []quotaCheck `json:"quota"`
	Repositories      []*repoCheck `json:"repositories"`
	repositoryRepairs int
}

// Maintenance answers shed_maintenance (reference §5.35) for the caller's Storage,
// Documents and group spaces: release locks older than lock_max_age_hours (and their
// working copies), delete working copies without a lock (and stray temporary files),
// reconcile the quota of the user and of its groups with the disk, and verify (repairing
// if needed) the repositories of the versioned zones.
func (s *Tools) Maintenance(ctx context.Context, c core.Caller) (core.Result, error) {
	rep := &maintenanceReport{ExpiredLocks: []string{}, CorruptedLocks: []string{}, OrphanEditzones: []string{},
		OrphanOwnerships: []string{}, Quota: []quotaCheck{}, Repositories: []*repoCheck{}}
	zones, err := s.maintenanceZones(ctx, c)
	defer func() {
		for _, z := range zones {
			z.Close()
		}
	}()
	if err != nil {
		return core.Result{}, err
	}
	owners := []store.Owner{}
	for _, z := range zones {
		expired, err := s.EditLocks(z).Expired(ctx)
		if err != nil {
			return core.Result{}, err
		}
		for _, l := range expired {
			if err := s.expireLock(ctx, z, l); err != nil {
				return core.Result{}, err
			}
			rep.ExpiredLocks = append(rep.ExpiredLocks, z.Name+"/"+l.Path)
		}
		removed, err := s.SweepEditzones(ctx, z) // orphan working copies, leftover temporary files
		rep.OrphanEditzones = append(rep.OrphanEditzones, removed...)
		if err != nil {
			return core.Result{}, err
		}
		if z.Versioned {
			rep.checkRepo(ctx, s, c, z)
		}
		if z.Kind != core.Documents { // Documents shares the user's quota with Storage
			owners = append(owners, z.Owner)
		}
	}
	for _, o := range owners {
		before, err := s.State().Usage(ctx, o)
		if err != nil {
			return core.Result{}, core.QuotaErr("Cannot read the quota", err)
		}
		after, unmeasured, err := s.Reconcile(ctx, o)
		if err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot measure the usage").Because(err)
		}
		limit := s.Limit(o)
		line := quotaCheck{Owner: o.Kind, ID: o.ID, RecordedBytes: before.Bytes, MeasuredBytes: after.Bytes,
			LimitBytes: limit.Bytes, RecordedFiles: before.Files, MeasuredFiles: after.Files, LimitFiles: limit.Files}
		if len(unmeasured) > 0 {
			// A folder the walk could not read: the recorded usage is kept (Reconcile).
			reconciled := false
			line.Unmeasured, line.Reconciled = unmeasured, &reconciled
		}
		rep.Quota = append(rep.Quota, line)
	}
	total := len(rep.ExpiredLocks) + len(rep.OrphanEditzones) + rep.repositoryRepairs
	return core.Result{Data: rep, Message: fmt.Sprintf("Maintenance complete: %d element(s) cleaned", total)}, nil
}

// maintenanceZones resolves the caller's Storage and Documents zones and the group zones
// that exist on disk. On error the zones resolved so far are returned to be closed.
func (s *Tools) maintenanceZones(ctx context.Context, c core.Caller) ([]*core.Zone, error) {
	var zones []*core.Zone
	for _, name := range []string{"storage", "documents"} {
		z, err := s.ResolveZone(ctx, c, name, "", true)
		if err != nil {
			return zones, err
		}
		zones = append(zones, z)
	}
	groups, available, err := s.Memberships(ctx, c)
	if err != nil || !available {
		return zones, err
	}
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g.ID] || !core.ValidID(g.ID) {
			continue
		}
		seen[g.ID] = true
		if _, err := os.Stat(s.Layout().GroupSpace(g.ID)); err != nil {
			continue // never used: nothing to maintain
		}
		z, err := s.ResolveZone(ctx, c, "group", g.ID, true)
		if err != nil {
			return zones, err
		}
		zones = append(zones, z)
	}
	return zones, nil
}

// expireLock releases an expired lock and removes its working copy. Release names the
// conversation: a lock taken over meanwhile by another conversation is left alone. The
// working copy stays when the edit's key was lost meanwhile (LOCK_ERROR: another replica's
// step may hold it now).
func (s *Tools) expireLock(ctx context.Context, z *core.Zone, l store.Lock) error {
	le, err := s.EditLease(ctx, z, l.Path)
	if err != nil {
		return err
	}
	defer le.Unlock()
	if err := s.EditLocks(z).Release(ctx, l.Path, l.ConvID); err != nil {
		return err
	}
	if !core.ValidID(l.ConvID) {
		return nil
	}
	ez, err := s.Editzone(z, l.ConvID)
	if err != nil {
		return err
	}
	defer ez.Close()
	if err := core.CheckLeases(false, le); err != nil {
		return err
	}
	s.DropWorkingCopy(ctx, z, ez, l.Path)
	return nil
}

// checkRepo verifies the zone's repository and repairs it when the check fails, then
// commits what an interrupted operation wrote but could not commit (core.CheckRepo). A
// zone whose repository was never created is skipped.
func (rep *maintenanceReport) checkRepo(ctx context.Context, s *Tools, c core.Caller, z *core.Zone) {
	rc, ok := s.CheckRepo(ctx, c, z)
	if !ok {
		return
	}
	out := &repoCheck{Zone: z.Name, Status: rc.Status, Problem: rc.Problem, Error: rc.Error, CommittedPending: rc.CommittedPending}
	if rc.Status == "repaired" {
		removed, rebuilt := rc.RemovedLocks, rc.IndexRebuilt
		out.RemovedLocks, out.IndexRebuilt = &removed, &rebuilt
	}
	rep.repositoryRepairs += rc.Repairs
	rep.Repositories = append(rep.Repositories, out)
}

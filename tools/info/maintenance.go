package info

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
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
	expired, err := s.State().ExpiredLocks(ctx, time.Now().Add(-s.LockMaxAge()))
	if err != nil {
		return core.Result{}, core.LockErr("(all)", err)
	}
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
		for _, l := range expired {
			if l.ZoneKey == core.ZoneKey(z) {
				if err := s.expireLock(ctx, z, l); err != nil {
					return core.Result{}, err
				}
				rep.ExpiredLocks = append(rep.ExpiredLocks, z.Name+"/"+l.Path)
			}
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

// expireLock releases an expired lock and removes its working copy. ReleaseLock names the
// conversation: a lock taken over meanwhile by another conversation is left alone. The
// working copy stays when the edit's key was lost meanwhile (LOCK_ERROR: another replica's
// step may hold it now).
func (s *Tools) expireLock(ctx context.Context, z *core.Zone, l store.Lock) error {
	le, err := s.EditLease(ctx, z, l.Path)
	if err != nil {
		return err
	}
	defer le.Unlock()
	if err := s.State().ReleaseLock(ctx, l.ZoneKey, l.Path, l.ConvID); err != nil && !errors.Is(err, store.ErrNotHolder) {
		return core.LockErr(l.Path, err)
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

// verifyRepo verifies r, the repository of z, and repairs it when the check fails, holding
// the repository's key as every other user of it does; false when it stays damaged or busy
// (out says so).
func (rep *maintenanceReport) verifyRepo(ctx context.Context, s *Tools, z *core.Zone, r *core.OpenRepo, out *repoCheck) bool {
	le, err := s.HoldLease(ctx, core.SpaceKey(core.KindRepo, z), lock.Exclusive, "the "+z.Name+" repository")
	if err != nil {
		out.Status, out.Error = "busy", repoProblem(err)
		return false
	}
	defer le.Unlock()
	verr := r.Verify()
	if verr == nil {
		return true
	}
	out.Problem = repoProblem(verr)
	// Why: Repair removes the repository's lock files, which are another replica's commit in
	// flight if the key was lost meanwhile.
	if err := core.CheckLeases(false, le); err != nil {
		out.Status, out.Error = "busy", repoProblem(err)
		return false
	}
	fix, err := r.Repair()
	if err == nil {
		err = r.Verify()
	}
	if err != nil {
		out.Status, out.Error = "damaged", repoProblem(err)
		return false
	}
	rep.repositoryRepairs++
	out.Status, out.RemovedLocks, out.IndexRebuilt = "repaired", &fix.RemovedLocks, &fix.IndexRebuilt
	return true
}

// checkRepo verifies the zone's repository and repairs it when the check fails, then
// commits what an interrupted operation wrote but could not commit ("written but not
// committed"). A zone whose repository was never created is skipped.
func (rep *maintenanceReport) checkRepo(ctx context.Context, s *Tools, c core.Caller, z *core.Zone) {
	if _, err := os.Stat(core.RepoDir(z.Space)); err != nil {
		return
	}
	out := &repoCheck{Zone: z.Name, Status: "ok"}
	rep.Repositories = append(rep.Repositories, out)
	r, err := s.Repo(z)
	if err != nil {
		out.Status, out.Error = "damaged", repoProblem(err)
		return
	}
	defer r.Release()
	if !rep.verifyRepo(ctx, s, z, r, out) {
		return
	}
	hash, err := s.Mutate(ctx, c, z, "shed_maintenance", "shed_maintenance: changes left uncommitted by an interrupted operation",
		func() (core.Change, error) { return core.Change{All: true}, nil })
	if err != nil {
		out.Status, out.Error = "damaged", repoProblem(err)
		return
	}
	if hash != "" {
		rep.repositoryRepairs++
		out.CommittedPending = hash
	}
}

// repoProblem is the model-facing text of a repository failure (vcs errors carry no host
// path); damage that Repair cannot fix needs the administrator.
func repoProblem(err error) string {
	if errors.Is(err, vcs.ErrCorrupt) && !errors.Is(err, vcs.ErrBusy) {
		return err.Error() + " (if repair fails, the administrator must restore the repository from a backup)"
	}
	return err.Error()
}

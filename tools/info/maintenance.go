package info

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
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
	expired, err := s.DB().ExpiredLocks(ctx, time.Now().Add(-s.LockMaxAge()))
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
	owners, leftover := []store.Owner{}, s.TempLeftover(ctx)
	for _, z := range zones {
		for _, l := range expired {
			if l.ZoneKey == core.ZoneKey(z) {
				if err := s.expireLock(ctx, z, l); err != nil {
					return core.Result{}, err
				}
				rep.ExpiredLocks = append(rep.ExpiredLocks, z.Name+"/"+l.Path)
			}
		}
		if err := s.sweepEditzones(ctx, z, leftover, rep); err != nil {
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
		before, err := s.DB().Usage(ctx, o)
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
	if err := s.DB().ReleaseLock(ctx, l.ZoneKey, l.Path, l.ConvID); err != nil && !errors.Is(err, store.ErrNotHolder) {
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

// sweepEditzones deletes every file of the zone's editzones that no lock of its
// conversation covers, and the temporary files that leftover picks (the sweeps' rule: a
// write in flight, of this server or of another live replica, keeps its own), then the
// empty folders.
func (s *Tools) sweepEditzones(ctx context.Context, z *core.Zone, leftover func(string, time.Time) bool, rep *maintenanceReport) error {
	root := core.EditzonesDir(z.Space)
	convs, err := os.ReadDir(root)
	if err != nil {
		return nil // no editzone yet
	}
	for _, cd := range convs {
		if !cd.IsDir() || !core.ValidID(cd.Name()) {
			continue
		}
		ez, err := confine.New(core.EditzoneDir(z.Space, cd.Name()))
		if err != nil {
			return core.Errf(core.InternalError, "Cannot open an editzone of %s", z.Name).Because(err)
		}
		err = s.sweepDir(ctx, z, ez, cd.Name(), "", leftover, rep)
		_ = ez.Close()
		if err != nil {
			return err
		}
		_ = os.Remove(core.EditzoneDir(z.Space, cd.Name())) // only succeeds when empty
	}
	return nil
}

// sweepDir walks one directory of a conversation's editzone (symlinks are never followed).
func (s *Tools) sweepDir(ctx context.Context, z *core.Zone, ez *confine.Fs, conv, dir string, leftover func(string, time.Time) bool, rep *maintenanceReport) error {
	f, err := ez.Open(dir)
	if err != nil {
		return nil
	}
	entries, err := f.Readdir(-1)
	_ = f.Close()
	if err != nil {
		return nil
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.IsDir() {
			if err := s.sweepDir(ctx, z, ez, conv, p, leftover, rep); err != nil {
				return err
			}
			_ = ez.Remove(p) // only succeeds when empty
			continue
		}
		if confine.IsTempName(p) {
			if leftover(p, e.ModTime()) && ez.Remove(p) == nil {
				rep.OrphanEditzones = append(rep.OrphanEditzones, z.Name+"/editzone/"+conv+"/"+p)
			}
			continue
		}
		orphan, err := s.orphan(ctx, z, conv, p)
		if err != nil {
			return err
		}
		if orphan {
			le, err := s.EditLease(ctx, z, p)
			if err != nil {
				return err
			}
			// Re-checked under the edit key: a shed_lockedit_open may have just taken the lock
			// (on another replica, if the key was lost meanwhile: LOCK_ERROR).
			if orphan, err = s.orphan(ctx, z, conv, p); err == nil && orphan {
				if err = core.CheckLeases(false, le); err == nil && ez.Remove(p) == nil {
					rep.OrphanEditzones = append(rep.OrphanEditzones, z.Name+"/editzone/"+conv+"/"+p)
				}
			}
			le.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// orphan reports whether the working copy p of conversation conv has no lock of its own.
func (s *Tools) orphan(ctx context.Context, z *core.Zone, conv, p string) (bool, error) {
	l, ok, err := s.DB().LockOf(ctx, core.ZoneKey(z), p)
	if err != nil {
		return false, core.LockErr(p, err)
	}
	return !ok || l.ConvID != conv, nil
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

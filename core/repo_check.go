package core

import (
	"context"
	"errors"
	"os"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/vcs"
)

// RepoCheck is what CheckRepo found and did in a versioned zone's repository
// (shed_maintenance).
type RepoCheck struct {
	// Status is "ok", "repaired", "busy" or "damaged"; Problem is what the check found, Error
	// why the repository stays busy or damaged (model-facing: no host path).
	Status, Problem, Error string
	// RemovedLocks and IndexRebuilt are what a repair did (Status "repaired").
	RemovedLocks []string
	IndexRebuilt bool
	// CommittedPending is the commit of what an interrupted operation left uncommitted.
	CommittedPending string
	// Repairs counts the repair and the commit done (0, 1 or 2).
	Repairs int
}

// CheckRepo verifies the repository of the versioned zone z and repairs it when the check
// fails, holding the repository's key exclusively as every other user of it does, then
// commits, as c, what an interrupted operation wrote but could not commit ("written but
// not committed"). false: z has no repository yet (nothing to check).
func (s *Service) CheckRepo(ctx context.Context, c Caller, z *Zone) (RepoCheck, bool) {
	if _, err := os.Stat(RepoDir(z.Space)); err != nil {
		return RepoCheck{}, false
	}
	out := RepoCheck{Status: "ok"}
	r, err := s.Repo(z)
	if err != nil {
		out.Status, out.Error = "damaged", repoProblem(err)
		return out, true
	}
	defer r.Release()
	if !s.repairRepo(ctx, z, r, &out) {
		return out, true
	}
	hash, err := s.Mutate(ctx, c, z, "shed_maintenance", "shed_maintenance: changes left uncommitted by an interrupted operation",
		func() (Change, error) { return Change{All: true}, nil })
	if err != nil {
		out.Status, out.Error = "damaged", repoProblem(err)
		return out, true
	}
	if hash != "" {
		out.Repairs++
		out.CommittedPending = hash
	}
	return out, true
}

// repairRepo verifies r, the repository of z, and repairs it when the check fails; false
// when it stays damaged or busy (out says so).
func (s *Service) repairRepo(ctx context.Context, z *Zone, r *OpenRepo, out *RepoCheck) bool {
	le, err := s.holdLease(ctx, spaceKey(kindRepo, z), lock.Exclusive, "the "+z.Name+" repository")
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
	if err := CheckLeases(false, le); err != nil {
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
	out.Repairs++
	out.Status, out.RemovedLocks, out.IndexRebuilt = "repaired", fix.RemovedLocks, fix.IndexRebuilt
	return true
}

// repoProblem is the model-facing text of a repository failure (vcs errors carry no host
// path); damage that Repair cannot fix needs the administrator.
func repoProblem(err error) string {
	if errors.Is(err, vcs.ErrCorrupt) && !errors.Is(err, vcs.ErrBusy) {
		return err.Error() + " (if repair fails, the administrator must restore the repository from a backup)"
	}
	return err.Error()
}

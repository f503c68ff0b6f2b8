package core

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/vcs"
)

// Bounds of the open repositories (repos): at most maxOpenRepos stay open, and one unused
// for idleRepo is closed. Each holds a file descriptor, a cached index and its share of the
// object cache; before these bounds every repository a user ever touched stayed open until
// the server stopped, so memory grew with the number of users who had come by.
const (
	maxOpenRepos = 128
	idleRepo     = 10 * time.Minute
)

// repos holds the open repositories, one vcs.Repo per versioned space shared by every
// caller (the repository lock only protects anything if every writer shares the same Repo),
// and the writers' gate of each space. Callers hold a reference (Service.repo) for as long
// as they use either; only repositories nobody holds are closed, the least recently used
// first when more than max are open, and any that stayed unused for idle.
type repos struct {
	mu    sync.Mutex
	m     map[string]*OpenRepo
	swept time.Time
	// max and idle default to maxOpenRepos and idleRepo (tests lower them).
	max  int
	idle time.Duration
}

// OpenRepo is one open repository with its gate and the number of callers holding it.
type OpenRepo struct {
	*vcs.Repo
	// The space's turn and gate are locks (locks.go). kindSpace, the turn, orders the
	// writers of the space: whole-tree operations (rename, delete, restore, maintenance)
	// hold it exclusively for their change and commit, a writing command from its measures
	// to its commit, its run included; single-file writes (writeFile) hold it shared, so
	// writes of different files write and fsync in parallel and only their commits queue on
	// the repository lock. kindGate is held exclusively by those holders of the turn from a
	// change to its commit (a command: around its measures before its run and its commit
	// after), so a full commit never sweeps a half-done change under another message; a
	// single-file write beside a command of its own process holds the gate shared instead
	// of the turn (beside.go: holdBeside).
	//
	//
	// Beside is what the space's writers share with a command of this process running
	// there (beside.go).
	Beside
	// swept is set once what dead writers left was recovered (lockRepo); guarded by the
	// repository lock.
	swept bool
	refs  int
	used  time.Time
	owner *repos
}

// Release gives back the reference taken by Service.repo; call it once.
func (o *OpenRepo) Release() {
	rs := o.owner
	rs.mu.Lock()
	defer rs.mu.Unlock()
	o.refs--
	o.used = time.Now()
	rs.sweep(o.used)
}

// Repo opens the repository of a versioned zone, or shares the one already open, and holds
// it until release: the work tree is the zone's data directory, the git directory sits
// beside it, outside the zone, so nothing a user command writes can change git's
// configuration or hooks.
func (s *Service) Repo(z *Zone) (*OpenRepo, error) {
	rs := &s.repos
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	if o, ok := rs.m[z.Space]; ok {
		o.refs++
		o.used = now
		return o, nil
	}
	rs.evict(now)
	work := DataDir(z.Space) // a historyZone has no file system
	if z.fs != nil {
		work = z.fs.Dir()
	}
	r, err := vcs.Open(gitDir(z), work)
	if err != nil {
		return nil, Errf(ExecutionError, "The %s repository cannot be opened", z.Name).Because(err).
			WithHint("Run shed_info(action='maintenance') to repair the repository")
	}
	if rs.m == nil {
		rs.m = map[string]*OpenRepo{}
	}
	o := &OpenRepo{Repo: r, refs: 1, used: now, owner: rs}
	rs.m[z.Space] = o
	return o, nil
}

// sweep closes the repositories nobody holds that stayed unused for idle; it looks at most
// every idle/4 (on every opening and release), so an idle repository closes within
// 1.25 × idle of its last use while the server serves anyone. rs.mu is held.
func (rs *repos) sweep(now time.Time) {
	idle := cmp.Or(rs.idle, idleRepo)
	if now.Sub(rs.swept) < idle/4 {
		return
	}
	rs.swept = now
	for space, o := range rs.m {
		if o.refs == 0 && now.Sub(o.used) >= idle {
			rs.close(space, o)
		}
	}
}

// evict makes room for one more repository: after the idle sweep, it closes the least
// recently used ones nobody holds while max or more are open. A repository in use is never
// closed: the bound may be exceeded meanwhile. rs.mu is held.
func (rs *repos) evict(now time.Time) {
	rs.sweep(now)
	limit := cmp.Or(rs.max, maxOpenRepos)
	for len(rs.m) >= limit {
		var space string
		var lru *OpenRepo
		for k, o := range rs.m {
			if o.refs == 0 && (lru == nil || o.used.Before(lru.used)) {
				space, lru = k, o
			}
		}
		if lru == nil {
			return
		}
		rs.close(space, lru)
	}
}

// close closes one repository and forgets it; rs.mu is held.
func (rs *repos) close(space string, o *OpenRepo) {
	_ = o.Close()
	delete(rs.m, space)
}

// FlushIndex writes the zone's cached git index to disk, so that the git CLI run by
// shed_exec sees HEAD's stat cache (commits save it lazily, core/vcs commitWith).
func (s *Service) FlushIndex(ctx context.Context, z *Zone) error {
	r, err := s.Repo(z)
	if err != nil {
		return err
	}
	defer r.Release()
	l, _, unlock, err := s.LockRepo(ctx, r, z)
	if err != nil {
		return err
	}
	defer unlock()
	return l.Flush()
}

// Change is what a modifying operation did: the zone-relative paths it touched (created,
// modified, deleted or renamed, both sides) — the hook point of versioning.
type Change struct {
	Paths []string
	// All asks for full change detection instead of Paths (after shed_exec).
	All bool
	// Growth, for the write of one file (mutateFile), is what the write adds to the zone's
	// bytes and names as it settles them (negative when it shrinks them), reported even when fn
	// fails: a command running in the zone meanwhile does not count it as its own.
	Growth Amount
	// Created are the files a transaction's change made below a folder it adds to (OpAdd:
	// an archive extracted): the transaction records their ownership in a group zone, as
	// it does before the change for the files its OpWrite steps create.
	Created []string
	// Outside is what the change adds to its owner's usage outside the zone (negative: the
	// working copy a locked edit's save removes): settled with Growth, never taken for a
	// write in the zone by a command running there.
	Outside Amount
	// BeforeCommit, in versioned zones, runs under the repository lock just before the
	// commit (the shed_exec guard of group zones restores protected files there).
	BeforeCommit func(l *vcs.Locked) error
	// charge, set by the write transaction, collects the history the commit adds, to be
	// settled with its reservation (history.go); nil: the commit charges it itself.
	charge *historyCharge
}

// Mutate runs a modifying operation. In versioned zones it holds the space's turn (it waits
// for a command running there), the zone's gate exclusively and the repository lock across
// the change and the commit (so a concurrent full commit never sweeps a half-done change
// under another message) and commits what fn reports, with the caller as author; message
// defaults to "tool: path". Empty changes make no commit, nor does a change during which
// one of these locks was lost (LOCK_ERROR). It returns the commit hash ("" if none). In an
// unversioned zone it is mutatePlain: the change goes on beside a command (plain.go).
func (s *Service) Mutate(ctx context.Context, c Caller, z *Zone, tool, message string, fn func() (Change, error)) (string, error) {
	if !z.Versioned {
		return "", s.mutatePlain(ctx, z, fn)
	}
	r, err := s.repoForChange(ctx, z)
	if err != nil {
		return "", err
	}
	defer r.Release()
	locks, err := s.holdWhole(ctx, z)
	if err != nil {
		return "", err
	}
	defer func() { locks.release() }() // the repository's lease joins them below
	l, repo, err := s.lockRepo(ctx, r, z)
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	locks = append(locks, repo)
	ch, err := fn()
	if err == nil {
		err = locks.check(true) // taken just before fn: lost while it ran, if at all
	}
	if err != nil {
		return "", err
	}
	return s.Commit(l, c, z, tool, message, ch)
}

// repoForChange opens z's repository for a change (Release it), after the recovery of what
// an unclean stop left uncommitted there (recover.go).
func (s *Service) repoForChange(ctx context.Context, z *Zone) (*OpenRepo, error) {
	r, err := s.Repo(z)
	if err != nil {
		return nil, err
	}
	if err := s.recoverSpace(ctx, r, z); err != nil {
		r.Release()
		return nil, err
	}
	return r, nil
}

// holdWhole takes what a whole-tree change of z's space holds from its change to its commit:
// the space's turn (it waits for a command running there), then its gate exclusively.
func (s *Service) holdWhole(ctx context.Context, z *Zone) (held, error) {
	turn, err := s.hold(ctx, spaceKey(KindSpace, z), lock.Exclusive, "a command or another change in the "+z.Label+" zone")
	if err != nil {
		return nil, err
	}
	gate, err := s.hold(ctx, spaceKey(KindGate, z), lock.Exclusive, "another change in the "+z.Label+" zone")
	if err != nil {
		turn.Unlock()
		return nil, err
	}
	return held{turn, gate}, nil
}

// mutateFile is mutate for the write of one file whose path is known in advance and that
// fn reports in Change.Paths (writeFile, shed_sqlite; the caller holds the file's path
// lock): the turn is held shared (holdBeside) and the repository lock only for the commit,
// and a command of this process running in the zone is no reason to wait: the write is
// noted for it (besideRun); one on another replica is waited for.
func (s *Service) mutateFile(ctx context.Context, c Caller, z *Zone, tool, message string, fn func() (Change, error)) (string, error) {
	if !z.Versioned {
		return "", s.mutatePlain(ctx, z, fn)
	}
	r, err := s.repoForChange(ctx, z)
	if err != nil {
		return "", err
	}
	defer r.Release()
	locks, err := s.holdBeside(ctx, &r.Beside, z)
	if err != nil {
		return "", err
	}
	defer func() { locks.release() }() // the repository's lease joins them below
	ch, err := fn()
	run := r.Run
	run.grew(ch.Growth)
	if err != nil || (!ch.All && len(ch.Paths) == 0) {
		return "", err
	}
	written := run.Identities(z, ch.Paths)
	l, repo, err := s.lockRepo(context.WithoutCancel(ctx), r, z)
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	locks = append(locks, repo)
	if err := locks.check(true); err != nil {
		return "", err
	}
	return run.CommitWrite(l, z, ch.Paths, written, func(paths []string) (string, error) {
		ch.Paths = paths
		return s.Commit(l, c, z, tool, message, ch)
	})
}

// LockRepo takes the repository lock of r, the open repository of z: the Locker's key
// (the authority across replicas), then the repository's own lock (one host). unlock
// releases both; le is the Locker's lease, for a holder that commits itself and checks its
// leases first (CheckLeases).
func (s *Service) LockRepo(ctx context.Context, r *OpenRepo, z *Zone) (l *vcs.Locked, le lock.Lease, unlock func(), err error) {
	l, le, err = s.lockRepo(ctx, r, z)
	if err != nil {
		return nil, nil, nil, err
	}
	return l, le, func() { l.Unlock(); le.Unlock() }, nil
}

// lockRepo is LockRepo returning the Locker's lease, which the caller releases after l.
// The first holder after the repository was opened recovers what a writer that died left
// (vcs.Locked.Recover: its lock files, an index behind HEAD): only under this key, which
// every writer of the repository holds on every replica, is a lock file surely stale.
func (s *Service) lockRepo(ctx context.Context, r *OpenRepo, z *Zone) (*vcs.Locked, lock.Lease, error) {
	le, err := s.hold(ctx, spaceKey(kindRepo, z), lock.Exclusive, "the "+z.Name+" repository")
	if err != nil {
		return nil, nil, err
	}
	l, err := r.Lock()
	if err != nil {
		le.Unlock()
		return nil, nil, repoErr(z, err)
	}
	if !r.swept {
		if _, err := l.Recover(); err != nil {
			l.Unlock()
			le.Unlock()
			return nil, nil, repoErr(z, err)
		}
		r.swept = true
	}
	return l, le, nil
}

// repoErr is the error of z's repository when it cannot be locked or read.
func repoErr(z *Zone, err error) *Error {
	return Errf(ExecutionError, "The %s repository is busy or damaged", z.Name).Because(err).
		WithHint("Retry, or run shed_info(action='maintenance') to repair the repository")
}

// Commit runs ch.BeforeCommit and commits ch under l, the repository lock of z, with c as
// the author: ch.Paths, or every change with ch.All; message defaults
// to "tool: path". It returns the commit hash ("" when nothing changed).
func (s *Service) Commit(l *vcs.Locked, c Caller, z *Zone, tool, message string, ch Change) (string, error) {
	if ch.BeforeCommit != nil {
		if err := ch.BeforeCommit(l); err != nil {
			return "", err
		}
	}
	if !ch.All && len(ch.Paths) == 0 {
		return "", nil
	}
	if message == "" {
		message = tool
		if len(ch.Paths) > 0 {
			message = fmt.Sprintf("%s: %s", tool, strings.Join(ch.Paths, ", "))
		}
	}
	author := vcs.Signature{Name: c.Name, Email: c.Email}
	if author.Name == "" {
		author.Name = c.UserID
	}
	if author.Email == "" {
		author.Email = c.UserID + "@fileshed"
	}
	var hash string
	var err error
	// What the commit wrote is on disk whatever its fate: charged to the owner (history.go).
	defer func(written int64) { s.chargeHistory(z, ch, l.Written()-written) }(l.Written())
	if ch.All {
		err = s.timed("git_commit_all", func() (err error) { hash, err = l.CommitAll(author, message); return err })
	} else {
		err = s.timed("git_commit", func() (err error) { hash, err = l.CommitPaths(ch.Paths, author, message); return err })
	}
	if err != nil {
		return "", Errf(ExecutionError, "The change was written but not committed").Because(err).
			WithHint("Run shed_info(action='maintenance') to repair the repository; the file itself is saved")
	}
	return hash, nil
}

// closeRepos releases every open repository (Service.Close).
func (s *Service) closeRepos() {
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	for k, o := range s.repos.m {
		s.repos.close(k, o)
	}
}

package vcs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// RepairReport says what Repair changed, for shed_maintenance to show.
type RepairReport struct {
	// RemovedLocks lists the stale lock and temporary files removed,
	// relative to the git directory (e.g. "index.lock").
	RemovedLocks []string
	// IndexRebuilt is true when the index was rebuilt from HEAD.
	IndexRebuilt bool
}

// Recover removes what writers that died left behind — git lock files
// (*.lock) and temporary object files — and rebuilds the index from HEAD when
// it is unreadable or does not describe HEAD. Only the holder of the authority
// over every writer of this repository may call it: the repository lock is an
// in-process mutex and a flock of one host, so on a volume that several hosts
// share a lock file seen under it may belong to a live writer of another host.
// core calls it under its Locker's repository key, which every writer on every
// replica holds, at the first lock after opening the repository (the index
// saved by Close, outside that key, is only a stat cache: refresh checks it
// against HEAD).
func (l *Locked) Recover() (RepairReport, error) {
	r, err := l.held()
	if err != nil {
		return RepairReport{}, err
	}
	var rep RepairReport
	if rep.RemovedLocks, err = r.removeStaleLocks(); err != nil {
		return rep, err
	}
	before, _ := r.statIndex()
	r.s = state{}
	if err := r.refresh(); err != nil {
		return rep, err
	}
	rep.IndexRebuilt = r.s.file != before
	return rep, nil
}

// removeStaleLocks removes the lock and temporary files (Recover).
func (r *Repo) removeStaleLocks() ([]string, error) {
	var removed []string
	rm := func(rel string) error {
		if err := os.Remove(filepath.Join(r.gitDir, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale %s: %w", rel, scrub(err))
		}
		removed = append(removed, rel)
		return nil
	}
	top, err := os.ReadDir(r.gitDir)
	if err != nil {
		return nil, corrupt("git directory", err)
	}
	for _, e := range top {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".lock") && e.Name() != flockName {
			if err := rm(e.Name()); err != nil {
				return removed, err
			}
		}
	}
	objs, err := os.ReadDir(filepath.Join(r.gitDir, "objects"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return removed, corrupt("objects", err)
	}
	for _, e := range objs {
		if strings.HasPrefix(e.Name(), tmpObjPrefix) {
			if err := rm(filepath.Join("objects", e.Name())); err != nil {
				return removed, err
			}
		}
	}
	err = filepath.WalkDir(filepath.Join(r.gitDir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".lock") {
			return nil
		}
		rel, err := filepath.Rel(r.gitDir, p)
		if err != nil {
			return err
		}
		return rm(rel)
	})
	if err != nil {
		return removed, corrupt("refs", err)
	}
	return removed, nil
}

// Verify is a light fsck for shed_maintenance: HEAD resolves to a readable
// commit and tree, the index is readable (checksum included) and describes
// HEAD, and no stale lock file is left. It changes nothing; the error wraps
// ErrCorrupt or ErrBusy and says what is wrong.
func (r *Repo) Verify() error {
	l, err := r.Lock()
	if err != nil {
		return err
	}
	defer l.Unlock()
	branch, head, err := r.readHead()
	if err != nil {
		return err
	}
	for _, name := range []string{"index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", string(branch) + ".lock"} {
		if _, err := os.Stat(filepath.Join(r.gitDir, name)); err == nil {
			return fmt.Errorf("%w: stale %s", ErrBusy, name)
		}
	}
	// The index file may lag behind this process's cache (commitWith saves it lazily): saved
	// first, unless another writer changed the file since (then it is checked as it is).
	if id, _ := r.statIndex(); r.s.head == head && id == r.s.file {
		r.flushIndex()
	}
	tree := emptyTree
	if !head.IsZero() {
		if tree, err = r.commitTree(head); err != nil {
			return err
		}
	}
	entries, err := r.readIndex()
	if err != nil {
		return corrupt("index", err)
	}
	cache := r.s
	r.s = state{valid: true, idx: entries, trees: map[string]plumbing.Hash{}}
	got, err := r.treeID()
	r.s = cache
	if err != nil {
		return err
	}
	if got != tree {
		// The index of an earlier HEAD, saved by another writer of the repository (a
		// replica: commits save the index lazily) is no damage while this process caches
		// HEAD: its cache replaces the file. Without such a cache, the file is damaged.
		if r.s.valid && r.s.head == head && r.storeIndex() == nil {
			return nil
		}
		return corrupt("index", errors.New("index does not match HEAD"))
	}
	return nil
}

// Repair is Recover under the repository lock (shed_maintenance, under the
// authority as Recover says). It cannot invent a HEAD commit: if HEAD itself is
// unreadable it returns ErrCorrupt.
func (r *Repo) Repair() (RepairReport, error) {
	l, err := r.Lock()
	if err != nil {
		return RepairReport{}, err
	}
	defer l.Unlock()
	return l.Recover()
}

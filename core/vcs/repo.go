package vcs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"golang.org/x/sys/unix"
)

// Signature names the author of a commit (the calling user). Characters that
// would break the commit header ('<', '>', newlines, NUL) are removed.
type Signature struct{ Name, Email string }

// The committer of every commit: the server, never the user.
const (
	committerName  = "fileshed"
	committerEmail = "fileshed@localhost"
	defaultBranch  = "refs/heads/main"
	// flockName is the cross-process lock file inside the git directory.
	flockName = "fileshed.lock"
)

// gitConfig is written once at init. hooksPath and fsmonitor matter only to
// the git CLI that shed_exec may run read-only against this git directory:
// no hook and no fsmonitor command is ever executed.
const gitConfig = `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	symlinks = true
	logallrefupdates = false
	hooksPath = /dev/null
	fsmonitor = false
[gc]
	auto = 0
`

// Repo is one versioned zone: a work tree and its git directory kept outside
// it. It is safe for concurrent use: every method that touches the
// repository takes the repository lock (an in-process mutex plus a flock on
// the git directory, so two processes sharing the storage also serialise).
// Open one Repo per repository and keep it: the lock is only meaningful if
// every caller shares it.
type Repo struct {
	mu       sync.Mutex
	gitDir   string
	workTree string
	st       *filesystem.Storage
	cache    repoCache // this repository's share of the process-wide object cache
	flock    *os.File
	s        state // cached index/HEAD; valid only while mu is held
	// fanout remembers the objects/xx directories known to exist (placeObject).
	fanout [256]atomic.Bool
	// written counts the bytes of the object files this Repo created (Locked.Written).
	written atomic.Int64
	// packs is the last seen state of objects/pack (packsChanged); guarded by mu.
	packs fileID
}

// Open opens the repository whose git directory is gitDir and whose work
// tree is workTree, creating it (branch main, no commits) when gitDir has no
// HEAD. workTree must exist. It fails with ErrCorrupt when HEAD does not name a
// readable commit. It writes nothing else and removes nothing: what a writer
// that died left (lock files, an index behind HEAD) is for Locked.Recover, by
// the holder of the authority over every writer. Why: the repository lock is a
// flock of one host; Open under it alone could take another host's live
// index.lock for a crash's leftover.
func Open(gitDir, workTree string) (*Repo, error) {
	fi, err := os.Stat(workTree)
	if err != nil {
		return nil, fmt.Errorf("work tree: %w", scrub(err))
	}
	if !fi.IsDir() {
		return nil, errors.New("work tree is not a directory")
	}
	if err := os.MkdirAll(gitDir, 0o700); err != nil {
		return nil, fmt.Errorf("git directory: %w", scrub(err))
	}
	fl, err := os.OpenFile(filepath.Join(gitDir, flockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("git directory lock: %w", scrub(err))
	}
	r := &Repo{gitDir: gitDir, workTree: workTree, cache: newRepoCache(objects), flock: fl}
	r.st = filesystem.NewStorage(osfs.New(gitDir, osfs.WithBoundOS()), r.cache)
	l, err := r.Lock()
	if err != nil {
		_ = fl.Close()
		return nil, err
	}
	defer l.Unlock()
	if err := r.initIfMissing(); err != nil {
		_ = fl.Close()
		return nil, err
	}
	if err := r.checkHead(); err != nil {
		_ = fl.Close()
		return nil, err
	}
	return r, nil
}

// checkHead fails with ErrCorrupt when HEAD does not name a branch whose commit
// (if any) and tree can be read.
func (r *Repo) checkHead() error {
	_, head, err := r.readHead()
	if err == nil && !head.IsZero() {
		_, err = r.commitTree(head)
	}
	return err
}

// Close saves the cached index, drops the repository's cached objects and releases the file
// descriptor of the cross-process lock. The Repo must not be used afterwards.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if unix.Flock(int(r.flock.Fd()), unix.LOCK_EX) == nil {
		r.flushIndex()
	}
	r.cache.Clear()
	return r.flock.Close()
}

// initIfMissing creates the git directory layout, config and HEAD when HEAD
// does not exist yet. Every file is written through rename, so a crash
// during init leaves either no HEAD (init runs again) or a complete one.
func (r *Repo) initIfMissing() error {
	if _, err := os.Stat(filepath.Join(r.gitDir, "HEAD")); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return corrupt("HEAD", err)
	}
	// The folders go-git's Storage.Init makes, made here: it makes them 0777 minus umask,
	// and a repository is as private as its zone.
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(r.gitDir, filepath.FromSlash(d)), 0o700); err != nil {
			return fmt.Errorf("init: %w", scrub(err))
		}
	}
	if err := writeFileAtomic(filepath.Join(r.gitDir, "config"), []byte(gitConfig)); err != nil {
		return fmt.Errorf("init config: %w", err)
	}
	return writeFileAtomic(filepath.Join(r.gitDir, "HEAD"), []byte("ref: "+defaultBranch+"\n"))
}

// Locked proves that its holder owns the repository lock. core takes it for
// every commit, and around a shed_exec's measures before its run and its guard
// and commit after it.
type Locked struct {
	r    *Repo
	done bool
}

// Lock takes the repository lock (in-process mutex, then the flock shared
// with other processes) and returns the handle that commits under it.
// Release it with Unlock.
func (r *Repo) Lock() (*Locked, error) {
	r.mu.Lock()
	for {
		err := unix.Flock(int(r.flock.Fd()), unix.LOCK_EX)
		if err == nil {
			r.packsChanged()
			return &Locked{r: r}, nil
		}
		if !errors.Is(err, unix.EINTR) {
			r.mu.Unlock()
			return nil, fmt.Errorf("lock repository: %w", err)
		}
	}
}

// Unlock releases the repository lock. Calling it twice is harmless.
func (l *Locked) Unlock() {
	if l.done {
		return
	}
	l.done = true
	_ = unix.Flock(int(l.r.flock.Fd()), unix.LOCK_UN)
	l.r.mu.Unlock()
}

// Flush brings the index file up to HEAD (rebuilt when it lags or is damaged,
// else the cached index written when it is ahead), so that a git CLI reading
// the repository (shed_exec git status) sees HEAD's stat cache. Commits save
// the index lazily (commitWith).
func (l *Locked) Flush() error {
	r, err := l.held()
	if err != nil {
		return err
	}
	if err := r.refresh(); err != nil {
		return err
	}
	r.flushIndex()
	return nil
}

// held returns the repository, or ErrUnlocked after Unlock.
func (l *Locked) held() (*Repo, error) {
	if l.done {
		return nil, ErrUnlocked
	}
	return l.r, nil
}

// writeFileAtomic writes name through name.lock and rename, as git does:
// readers see the old or the new content, never a partial one, and a crash
// leaves at most a stale .lock that Open removes.
func writeFileAtomic(name string, data []byte) error {
	lock := name + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s.lock exists", ErrBusy, filepath.Base(name))
	}
	if err != nil {
		return scrub(err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(lock)
		return scrub(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(lock)
		return scrub(err)
	}
	if err := os.Rename(lock, name); err != nil {
		_ = os.Remove(lock)
		return scrub(err)
	}
	return nil
}

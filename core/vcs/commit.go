package vcs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sys/unix"
)

// CommitPaths takes the repository lock and commits exactly the given
// work-tree-relative paths; see (*Locked).CommitPaths.
func (r *Repo) CommitPaths(paths []string, author Signature, msg string) (string, error) {
	l, err := r.Lock()
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	return l.CommitPaths(paths, author, msg)
}

// CommitAll takes the repository lock and commits every change in the work
// tree; see (*Locked).CommitAll.
func (r *Repo) CommitAll(author Signature, msg string) (string, error) {
	l, err := r.Lock()
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	return l.CommitAll(author, msg)
}

// CommitPaths commits exactly these work-tree-relative paths as they are on
// disk now: added, modified or deleted; a directory means everything under
// it ("." is the whole work tree). Only these paths are looked at, never the
// rest of the work tree. The author is the user, the committer the server.
// It returns the new commit id, or "" and no error when nothing changed.
// Paths with a ".git" component are ignored; a path whose parent is a
// symlink is refused with ErrSymlinkInPath (the link is never followed); a
// path that is itself a symlink is committed as a link.
func (l *Locked) CommitPaths(paths []string, author Signature, msg string) (string, error) {
	r, err := l.held()
	if err != nil {
		return "", err
	}
	clean := make([]string, 0, len(paths))
	for _, p := range paths {
		c, err := cleanPath(p)
		if err != nil {
			return "", err
		}
		if !ignoredPath(c) {
			clean = append(clean, c)
		}
	}
	return r.commitWith(author, msg, func(rootfd int) error {
		for _, p := range clean {
			if err := r.syncPath(rootfd, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// CommitAll detects every change in the work tree (after a shed_exec) and
// commits it: new, modified and deleted files and links. Files whose stat
// data (size, mtime, ctime, inode, mode) match the index are not read, so
// the cost is one stat per file plus hashing what changed. It returns "" and
// no error when nothing changed.
func (l *Locked) CommitAll(author Signature, msg string) (string, error) {
	r, err := l.held()
	if err != nil {
		return "", err
	}
	return r.commitWith(author, msg, func(rootfd int) error { return r.syncPath(rootfd, "") })
}

// commitWith refreshes the cached state, lets apply update the index from
// the work tree, and commits the result when its tree differs from HEAD's.
// On any error the cache is dropped, so a half-applied index never
// survives: the next call reloads the index file, which matches HEAD.
//
// The index file is a stat cache of HEAD: it is saved at most every
// indexSaveInterval (saveIndexSoon), on Flush and on Close, not after every
// commit — rewriting a 10,000-entry index cost more than the commit itself.
// A crash before the save leaves an index older than HEAD, which refresh
// rebuilds from HEAD (only the entries changed since lose their stat data).
func (r *Repo) commitWith(author Signature, msg string, apply func(rootfd int) error) (hash string, err error) {
	if err := r.refresh(); err != nil {
		return "", err
	}
	if _, err := os.Lstat(r.indexPath() + ".lock"); err == nil {
		return "", fmt.Errorf("%w: index.lock exists", ErrBusy) // a git CLI writing, or a crash's leftover
	}
	defer func() {
		if err != nil {
			// Drop the half-applied cache and bring the index file back to HEAD
			// now (it may lag behind the last commits): best effort, refresh
			// does it again on the next call if this fails.
			r.s.valid = false
			_ = r.refresh()
		}
	}()
	rootfd, err := r.openRoot()
	if err != nil {
		return "", err
	}
	err = apply(rootfd)
	_ = unix.Close(rootfd)
	if err != nil {
		return "", err
	}
	tree, err := r.buildTree()
	if err != nil {
		return "", err
	}
	if tree == r.s.headTree {
		r.saveIndexSoon()
		return "", nil
	}
	h, err := r.writeCommit(tree, author, msg)
	if err != nil {
		return "", err
	}
	if err := r.updateBranch(h); err != nil {
		return "", err
	}
	// The commit is durable once the branch moved; the index only caches it.
	r.s.head, r.s.headTree, r.s.dirty = h, tree, true
	r.saveIndexSoon()
	return h.String(), nil
}

// syncPath updates the index for one cleaned path ("" for the work tree).
func (r *Repo) syncPath(rootfd int, p string) error {
	if p == "" {
		entries, err := r.scanDir(rootfd, "", nil)
		if err != nil {
			return err
		}
		r.replaceRange("", entries)
		return nil
	}
	dir, base := path.Split(p)
	pfd, err := openDir(rootfd, strings.TrimSuffix(dir, "/"))
	if errors.Is(err, errMissing) {
		r.replaceRange(p, nil)
		return nil
	}
	if err != nil {
		return &PathError{Path: p, Err: err}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			r.replaceRange(p, nil)
			return nil
		}
		return &PathError{Path: p, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		dfd, err := unix.Openat(pfd, base, dirFlags, 0)
		if err != nil {
			return &PathError{Path: p, Err: ErrChanged}
		}
		defer unix.Close(dfd)
		entries, err := r.scanDir(dfd, p, nil)
		if err != nil {
			return err
		}
		r.replaceRange(p, entries)
		return nil
	}
	old := r.lookup(p)
	e, err := r.fileEntry(pfd, base, p, &st, old)
	if err != nil {
		return err
	}
	switch {
	case e == nil:
		r.replaceRange(p, nil)
	case e != old:
		r.setFile(e)
	}
	return nil
}

// writeCommit stores a commit of tree on top of HEAD.
func (r *Repo) writeCommit(tree plumbing.Hash, author Signature, msg string) (plumbing.Hash, error) {
	now := time.Now()
	name := strings.TrimSpace(headerSafe(author.Name))
	if name == "" {
		name = "unknown"
	}
	c := &object.Commit{
		Author:    object.Signature{Name: name, Email: strings.TrimSpace(headerSafe(author.Email)), When: now},
		Committer: object.Signature{Name: committerName, Email: committerEmail, When: now},
		Message:   messageSafe(msg),
		TreeHash:  tree,
	}
	if !r.s.head.IsZero() {
		c.ParentHashes = []plumbing.Hash{r.s.head}
	}
	var obj plumbing.MemoryObject
	if err := c.Encode(&obj); err != nil {
		return plumbing.ZeroHash, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.writeObject(plumbing.CommitObject, obj.Size(), rd)
}

// updateBranch moves the branch to h through branch.lock and rename, after
// checking under that lock that it still names the commit we built on (it
// would not if another program wrote the repository).
func (r *Repo) updateBranch(h plumbing.Hash) error {
	name := filepath.Join(r.gitDir, filepath.FromSlash(string(r.s.branch)))
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("branch: %w", scrub(err))
	}
	lock := name + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s.lock exists", ErrBusy, r.s.branch)
	}
	if err != nil {
		return fmt.Errorf("branch: %w", scrub(err))
	}
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(lock)
		return err
	}
	if _, cur, err := r.readHead(); err != nil {
		return fail(err)
	} else if cur != r.s.head {
		return fail(fmt.Errorf("%w: %s moved", ErrBusy, r.s.branch))
	}
	if _, err := f.WriteString(h.String() + "\n"); err != nil {
		return fail(fmt.Errorf("branch: %w", scrub(err)))
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(lock)
		return fmt.Errorf("branch: %w", scrub(err))
	}
	if err := os.Rename(lock, name); err != nil {
		_ = os.Remove(lock)
		return fmt.Errorf("branch: %w", scrub(err))
	}
	return nil
}

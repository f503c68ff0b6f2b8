package vcs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// emptyTree is the id of the tree with no entries: the tree of an unborn
// branch.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// fileID identifies one version of the index file on disk: Verify checks the
// file as it is when another writer changed it since this process read or
// saved it, and Recover reports a rebuild by it. (The cache does not depend on
// it: a valid cache follows HEAD, see refresh.)
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// state is what the Repo caches between calls, only while it holds the
// lock. The invariant after refresh: the tree of idx equals headTree, so
// the index is purely a stat cache of HEAD plus what is being committed.
type state struct {
	valid    bool
	branch   plumbing.ReferenceName
	head     plumbing.Hash // zero while the branch is unborn
	headTree plumbing.Hash
	idx      []*index.Entry // sorted by Name, no stages
	file     fileID         // the index file idx matches
	mtime    time.Time      // its mtime: entries modified at or after it are re-hashed (racy git)
	trees    map[string]plumbing.Hash
	dirty    bool      // idx differs from the index file
	saved    time.Time // when this process last wrote the index file
}

// indexSaveInterval bounds how long the index file may lag behind the cached
// index (commitWith): files modified after the last save are re-hashed by the
// next full scan (racy-git rule), so the lag is kept short.
const indexSaveInterval = time.Second

// refresh makes r.s match the disk: it keeps the cache when HEAD and the
// index file are unchanged, otherwise it reloads them, and when the index is
// missing, unreadable or does not describe HEAD's tree (a crash between the
// ref update and the index write, a truncated file) it rebuilds the index
// from HEAD, keeping the stat data of entries that still match.
func (r *Repo) refresh() error {
	branch, head, err := r.readHead()
	if err != nil {
		return err
	}
	id, mtime := r.statIndex()
	if r.s.valid && r.s.branch == branch {
		switch {
		case r.s.head == head:
			// The index file changed or not, the cache still describes HEAD: another
			// writer of the file (a replica saving its own cache of HEAD, git status
			// refreshing stat data) changed no content it caches.
			return nil
		case r.advance(head):
			return nil
		}
	}
	tree := emptyTree
	if !head.IsZero() {
		if tree, err = r.commitTree(head); err != nil {
			return err
		}
	}
	entries, readErr := r.readIndex()
	r.s = state{valid: true, branch: branch, head: head, headTree: tree, idx: entries,
		file: id, mtime: mtime, trees: map[string]plumbing.Hash{}}
	if readErr == nil {
		if got, err := r.treeID(); err == nil && got == tree {
			return nil
		}
	}
	if err := r.rebuildIndex(); err != nil {
		r.s.valid = false
		return err
	}
	return nil
}

// rebuildIndex replaces the index with HEAD's tree and saves it. Entries
// whose content and mode are unchanged keep their stat data; the others get
// none, so the next CommitAll hashes them.
func (r *Repo) rebuildIndex() error {
	old := make(map[string]*index.Entry, len(r.s.idx))
	for _, e := range r.s.idx {
		old[e.Name] = e
	}
	var entries []*index.Entry
	if err := r.treeEntries(r.s.headTree, "", func(name string, te object.TreeEntry) {
		if e := old[name]; e != nil && e.Hash == te.Hash && e.Mode == te.Mode {
			entries = append(entries, e)
			return
		}
		entries = append(entries, &index.Entry{Name: name, Hash: te.Hash, Mode: te.Mode})
	}); err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	r.s.idx = entries
	r.s.trees = map[string]plumbing.Hash{}
	return r.storeIndex()
}

// readHead resolves HEAD to its branch and commit (zero when unborn).
func (r *Repo) readHead() (plumbing.ReferenceName, plumbing.Hash, error) {
	ref, err := r.st.Reference(plumbing.HEAD)
	if err != nil {
		return "", plumbing.ZeroHash, corrupt("HEAD", err)
	}
	if ref.Type() != plumbing.SymbolicReference || !ref.Target().IsBranch() {
		return "", plumbing.ZeroHash, corrupt("HEAD", errors.New("HEAD does not name a branch"))
	}
	br, err := r.st.Reference(ref.Target())
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		// go-git reports an empty ref file (a writer that died without
		// rename) as "not found": that is damage, not an unborn branch,
		// and treating it as unborn would start a new root commit.
		if _, serr := os.Lstat(filepath.Join(r.gitDir, filepath.FromSlash(string(ref.Target())))); serr == nil {
			return "", plumbing.ZeroHash, corrupt(ref.Target().String(), errors.New("empty reference file"))
		}
		return ref.Target(), plumbing.ZeroHash, nil
	}
	if err != nil {
		return "", plumbing.ZeroHash, corrupt(ref.Target().String(), err)
	}
	if br.Type() != plumbing.HashReference || br.Hash().IsZero() {
		return "", plumbing.ZeroHash, corrupt(ref.Target().String(), errors.New("not a commit id"))
	}
	return ref.Target(), br.Hash(), nil
}

// commitTree returns the tree of commit h, checking that both are readable.
func (r *Repo) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	c, err := object.GetCommit(r.st, h)
	if err != nil {
		return plumbing.ZeroHash, corrupt("commit "+h.String(), err)
	}
	if _, err := object.GetTree(r.st, c.TreeHash); err != nil {
		return plumbing.ZeroHash, corrupt("tree of commit "+h.String(), err)
	}
	return c.TreeHash, nil
}

func (r *Repo) indexPath() string { return filepath.Join(r.gitDir, "index") }

// statIndex identifies the index file on disk (zero when it is missing).
func (r *Repo) statIndex() (fileID, time.Time) { return statID(r.indexPath()) }

// statID identifies one version of the file or folder name (zero when it is missing).
func statID(name string) (fileID, time.Time) {
	fi, err := os.Stat(name)
	if err != nil {
		return fileID{}, time.Time{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, fi.ModTime()
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, fi.ModTime()
}

// readIndex decodes the index file (its trailing checksum included).
func (r *Repo) readIndex() ([]*index.Entry, error) {
	f, err := os.Open(r.indexPath())
	if err != nil {
		return nil, scrub(err)
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(&idx); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	for _, e := range idx.Entries {
		if e.Stage != 0 || e.IntentToAdd || e.SkipWorktree {
			return nil, errors.New("index: unexpected entry state")
		}
	}
	if !sort.SliceIsSorted(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name }) {
		return nil, errors.New("index: entries out of order")
	}
	return idx.Entries, nil
}

// lockIndex creates index.lock exclusively, as git does before it changes
// the index: while it exists no other writer (nor a git CLI) can write the
// index. An existing lock is ErrBusy (Repair removes a stale one).
func (r *Repo) lockIndex() (*os.File, error) {
	f, err := os.OpenFile(r.indexPath()+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: index.lock exists", ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("index: %w", scrub(err))
	}
	return f, nil
}

// saveIndex writes the cached index into the held index.lock and renames it
// over the index, then records the identity of the new file.
func (r *Repo) saveIndex(f *os.File) error {
	err := encodeIndex(f, r.s.idx)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), r.indexPath())
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("index: %w", scrub(err))
	}
	r.s.file, r.s.mtime = r.statIndex()
	r.s.dirty, r.s.saved = false, time.Now()
	return nil
}

// saveIndexSoon saves a dirty cached index when the last save is older than
// indexSaveInterval. A failure (a git CLI holding index.lock, a full disk)
// only drops the cache: the next refresh rebuilds it from HEAD.
func (r *Repo) saveIndexSoon() {
	if r.s.dirty && time.Since(r.s.saved) >= indexSaveInterval {
		r.flushIndex()
	}
}

// flushIndex saves the cached index if it differs from the index file.
func (r *Repo) flushIndex() {
	if !r.s.valid || !r.s.dirty {
		return
	}
	if _, head, err := r.readHead(); err != nil || head != r.s.head {
		r.s.valid = false // a commit of another writer: never save a cache of an older HEAD
		return
	}
	if err := r.storeIndex(); err != nil {
		r.s.valid = false
	}
}

// storeIndex locks and saves the cached index.
func (r *Repo) storeIndex() error {
	f, err := r.lockIndex()
	if err != nil {
		return err
	}
	return r.saveIndex(f)
}

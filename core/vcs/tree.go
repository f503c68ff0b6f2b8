package vcs

import (
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// buildTree writes the trees of the cached index and returns the root's id.
// Directories whose entries did not change since the last build reuse their
// cached id (git's cache-tree idea), so a commit of one file re-encodes only
// the trees on that file's path. Index order (byte order of full paths)
// equals git's tree order, so each directory is one contiguous run.
func (r *Repo) buildTree() (plumbing.Hash, error) {
	h, _, err := r.buildDir(0, "", true)
	return h, err
}

// treeID is the id of the tree the index describes, computed without writing a tree: what
// refresh, advance and Verify compare with HEAD's. Why not buildTree: an index that lags
// behind HEAD (after a crash) would leave trees nobody reaches in the history, bytes of the
// owner's quota that no commit charged. The ids it caches name existing trees only when it
// returns HEAD's tree: callers drop the cache otherwise.
func (r *Repo) treeID() (plumbing.Hash, error) {
	h, _, err := r.buildDir(0, "", false)
	return h, err
}

// buildDir builds directory dir ("" for the root) from r.s.idx[i:] and
// returns its id and the index of the first entry after it; with write false, the trees
// are hashed and not stored.
func (r *Repo) buildDir(i int, dir string, write bool) (plumbing.Hash, int, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	if h, ok := r.s.trees[dir]; ok {
		return h, r.endOf(i, prefix), nil
	}
	es := r.s.idx
	var t []byte
	for i < len(es) && strings.HasPrefix(es[i].Name, prefix) {
		rest := es[i].Name[len(prefix):]
		if k := strings.IndexByte(rest, '/'); k >= 0 {
			h, j, err := r.buildDir(i, prefix+rest[:k], write)
			if err != nil {
				return plumbing.ZeroHash, 0, err
			}
			t = appendTreeEntry(t, filemode.Dir, rest[:k], h)
			i = j
			continue
		}
		t = appendTreeEntry(t, es[i].Mode, rest, es[i].Hash)
		i++
	}
	var h plumbing.Hash
	if write {
		var err error
		if h, err = r.writeBytes(plumbing.TreeObject, t); err != nil {
			return plumbing.ZeroHash, 0, err
		}
	} else {
		hs := plumbing.NewHasher(plumbing.TreeObject, int64(len(t)))
		_, _ = hs.Write(t)
		h = hs.Sum()
	}
	r.s.trees[dir] = h
	return h, i, nil
}

// appendTreeEntry appends one entry in git's tree format: octal mode, space,
// name, NUL, binary id.
func appendTreeEntry(t []byte, m filemode.FileMode, name string, h plumbing.Hash) []byte {
	t = strconv.AppendUint(t, uint64(m), 8)
	t = append(append(append(t, ' '), name...), 0)
	return append(t, h[:]...)
}

// endOf returns the index of the first entry at or after i that does not
// start with prefix ("" matches everything).
func (r *Repo) endOf(i int, prefix string) int {
	if prefix == "" {
		return len(r.s.idx)
	}
	// prefix ends with '/'; '0' is the byte after '/'.
	upper := prefix[:len(prefix)-1] + "0"
	return i + sort.Search(len(r.s.idx)-i, func(k int) bool { return r.s.idx[i+k].Name >= upper })
}

// treeEntries calls fn for every blob and link under tree id, with its full
// path, in index order.
func (r *Repo) treeEntries(id plumbing.Hash, dir string, fn func(string, object.TreeEntry)) error {
	if id == emptyTree {
		return nil // the tree of an unborn branch need not be stored
	}
	t, err := object.GetTree(r.st, id)
	if err != nil {
		return corrupt("tree "+id.String(), err)
	}
	for _, te := range t.Entries {
		name := te.Name
		if dir != "" {
			name = dir + "/" + te.Name
		}
		if te.Mode == filemode.Dir {
			if err := r.treeEntries(te.Hash, name, fn); err != nil {
				return err
			}
			continue
		}
		fn(name, te)
	}
	return nil
}

// touch drops the cached tree of every directory containing name.
func (r *Repo) touch(name string) {
	delete(r.s.trees, "")
	for i := strings.IndexByte(name, '/'); i >= 0; {
		delete(r.s.trees, name[:i])
		j := strings.IndexByte(name[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
}

// search returns the position of name in the index and whether it is there.
func (r *Repo) search(name string) (int, bool) {
	i := sort.Search(len(r.s.idx), func(k int) bool { return r.s.idx[k].Name >= name })
	return i, i < len(r.s.idx) && r.s.idx[i].Name == name
}

// lookup returns the index entry for name, or nil.
func (r *Repo) lookup(name string) *index.Entry {
	if i, ok := r.search(name); ok {
		return r.s.idx[i]
	}
	return nil
}

// replaceRange replaces the index entries named dir or under dir/ (the
// whole index for "") with repl, which must be sorted and lie under dir/.
// When repl is not empty dir is a directory, so file entries on its parent
// path are stale (a file that became a directory) and go too. Every changed
// name invalidates its cached trees.
func (r *Repo) replaceRange(dir string, repl []*index.Entry) {
	if dir != "" {
		r.removeEntry(dir)
		if len(repl) > 0 {
			r.removeParents(dir)
		}
	}
	lo, hi := 0, len(r.s.idx)
	if dir != "" {
		lo, _ = r.search(dir + "/")
		hi = r.endOf(lo, dir+"/")
	}
	old := r.s.idx[lo:hi]
	changed := len(old) != len(repl)
	for k := 0; !changed && k < len(old); k++ {
		changed = old[k] != repl[k]
	}
	if !changed {
		return
	}
	seen := make(map[*index.Entry]bool, len(old))
	for _, e := range old {
		seen[e] = true
	}
	for _, e := range repl {
		if !seen[e] {
			r.touch(e.Name)
		}
		delete(seen, e)
	}
	for e := range seen {
		r.touch(e.Name)
	}
	r.s.dirty = true
	out := make([]*index.Entry, 0, len(r.s.idx)-len(old)+len(repl))
	out = append(append(append(out, r.s.idx[:lo]...), repl...), r.s.idx[hi:]...)
	r.s.idx = out
}

// removeEntry removes the entry named exactly name, if any.
func (r *Repo) removeEntry(name string) {
	if i, ok := r.search(name); ok {
		r.touch(name)
		r.s.dirty = true
		r.s.idx = append(r.s.idx[:i], r.s.idx[i+1:]...)
	}
}

// removeParents removes file entries named like a parent directory of name.
func (r *Repo) removeParents(name string) {
	for k := strings.LastIndexByte(name, '/'); k > 0; k = strings.LastIndexByte(name, '/') {
		name = name[:k]
		r.removeEntry(name)
	}
}

// setFile records e as the entry of a file or link: entries under its name
// (a directory that became a file) and file entries on its parent path go.
func (r *Repo) setFile(e *index.Entry) {
	r.replaceRange(e.Name, nil)
	r.removeParents(e.Name)
	i, _ := r.search(e.Name)
	r.s.idx = append(r.s.idx, nil)
	copy(r.s.idx[i+1:], r.s.idx[i:])
	r.s.idx[i] = e
	r.touch(e.Name)
	r.s.dirty = true
}

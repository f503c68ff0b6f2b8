package vcs

import (
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// advance brings the cached index forward to commit head of the same branch, which another
// writer (a replica sharing the repository) committed since this cache was made: the
// entries that differ between the two trees are replaced from head's tree — without stat
// data, so the next scan of their paths hashes them — and the cached trees of their
// folders are dropped. Replicas take turns committing to one repository, so without this
// each commit found HEAD moved and reloaded and rebuilt the whole index (see
// BenchmarkWritersTakingTurns). The result must build exactly head's tree; when it does
// not, or a tree cannot be read, it reports false and refresh reloads as before.
func (r *Repo) advance(head plumbing.Hash) bool {
	if r.s.headTree == emptyTree {
		return false // nothing cached to keep
	}
	tree, err := r.commitTree(head)
	if err != nil {
		return false
	}
	changed := map[string]*index.Entry{} // nil: removed
	if err := r.diffTrees(r.s.headTree, tree, "", changed); err != nil {
		return false
	}
	// The new entries, sorted, merged into the sorted index without the changed names: a
	// pass over the index, not a sort of it.
	names := make([]string, 0, len(changed))
	for name := range changed {
		names = append(names, name)
		r.touch(name)
	}
	sort.Strings(names)
	idx := make([]*index.Entry, 0, len(r.s.idx)+len(changed))
	k := 0
	for _, e := range r.s.idx {
		for ; k < len(names) && names[k] < e.Name; k++ {
			if ne := changed[names[k]]; ne != nil {
				idx = append(idx, ne)
			}
		}
		if _, ok := changed[e.Name]; !ok {
			idx = append(idx, e)
		}
	}
	for ; k < len(names); k++ {
		if ne := changed[names[k]]; ne != nil {
			idx = append(idx, ne)
		}
	}
	r.s.idx = idx
	if got, err := r.treeID(); err != nil || got != tree {
		r.s.valid = false // refresh reloads the whole state
		return false
	}
	r.s.head, r.s.headTree, r.s.dirty = head, tree, true
	return true
}

// diffTrees records in changed every file or link that differs between the trees a and b
// of folder dir: its entry in b, or nil when b has none. Subtrees with the same id are
// skipped unread, so the cost is the folders on the changed paths, not the repository.
func (r *Repo) diffTrees(a, b plumbing.Hash, dir string, changed map[string]*index.Entry) error {
	if a == b {
		return nil
	}
	entries := func(id plumbing.Hash) (map[string]object.TreeEntry, error) {
		out := map[string]object.TreeEntry{}
		if id.IsZero() || id == emptyTree {
			return out, nil
		}
		t, err := object.GetTree(r.st, id)
		if err != nil {
			return nil, corrupt("tree "+id.String(), err)
		}
		for _, te := range t.Entries {
			out[te.Name] = te
		}
		return out, nil
	}
	ea, err := entries(a)
	if err != nil {
		return err
	}
	eb, err := entries(b)
	if err != nil {
		return err
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	names := make(map[string]bool, len(ea)+len(eb))
	for n := range ea {
		names[n] = true
	}
	for n := range eb {
		names[n] = true
	}
	for n := range names {
		x, inA := ea[n]
		y, inB := eb[n]
		name := prefix + n
		switch {
		case inA && inB && x.Hash == y.Hash && x.Mode == y.Mode:
			continue
		case inA && inB && x.Mode == filemode.Dir && y.Mode == filemode.Dir:
			if err := r.diffTrees(x.Hash, y.Hash, name, changed); err != nil {
				return err
			}
			continue
		case inA && x.Mode == filemode.Dir:
			if err := r.diffTrees(x.Hash, plumbing.ZeroHash, name, changed); err != nil {
				return err // every file below it removed
			}
		case inA:
			changed[name] = nil
		}
		if !inB {
			continue
		}
		if y.Mode != filemode.Dir {
			changed[name] = &index.Entry{Name: name, Hash: y.Hash, Mode: y.Mode}
			continue
		}
		if err := r.treeEntries(y.Hash, name, func(n string, te object.TreeEntry) {
			changed[n] = &index.Entry{Name: n, Hash: te.Hash, Mode: te.Mode}
		}); err != nil {
			return err
		}
	}
	return nil
}

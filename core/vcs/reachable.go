package vcs

import (
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Reachable is what CheckReachable read: the commits and all objects.
type Reachable struct {
	Commits, Objects int
}

// CheckReachable reads every object reachable from HEAD and from every branch and tag:
// each commit with its parents, each tree, each blob to its end, and checks that each
// hashes to its id. Why every object and not only HEAD's commit: shed_version history and
// restore read old commits and blobs when asked, long after a repository "verified"; a
// missing or damaged one must be found by the operator (admin verify, import-original),
// not by a user's EXECUTION_ERROR. It fails with ErrCorrupt naming the first object that
// cannot be read, where it was met (path and commit). Gitlinks (a repository cloned
// inside the zone) name another repository's commit: never followed.
func (r *Repo) CheckReachable() (Reachable, error) {
	l, err := r.Lock()
	if err != nil {
		return Reachable{}, err
	}
	defer l.Unlock()
	w := &reach{r: r, seen: map[plumbing.Hash]bool{}}
	if _, head, err := r.readHead(); err != nil {
		return w.n, err
	} else if !head.IsZero() {
		w.commits = append(w.commits, head)
	}
	refs, err := r.st.IterReferences()
	if err != nil {
		return w.n, corrupt("references", err)
	}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && (ref.Name().IsBranch() || ref.Name().IsTag()) {
			return w.tip(ref.Name().String(), ref.Hash())
		}
		return nil
	})
	if err != nil {
		return w.n, err
	}
	for len(w.commits) > 0 {
		h := w.commits[len(w.commits)-1]
		w.commits = w.commits[:len(w.commits)-1]
		if err := w.commit(h); err != nil {
			return w.n, err
		}
	}
	return w.n, nil
}

// reach is one CheckReachable walk: the commits still to read, every object already read.
type reach struct {
	r       *Repo
	seen    map[plumbing.Hash]bool
	commits []plumbing.Hash
	n       Reachable
}

// tip starts the walk at what a branch or tag names: a commit, or an annotated tag (peeled).
func (w *reach) tip(name string, h plumbing.Hash) error {
	for range 10 { // a tag of a tag of ...: bounded
		o, err := w.read(h, plumbing.AnyObject, name)
		if err != nil {
			return err
		}
		switch o.Type() {
		case plumbing.CommitObject:
			w.seen[h] = false // read as a commit below, with its tree and parents
			w.commits = append(w.commits, h)
			return nil
		case plumbing.TagObject:
			t, err := object.DecodeTag(w.r.st, o)
			if err != nil {
				return corrupt("tag "+h.String()+" ("+name+")", err)
			}
			h = t.Target
		default:
			return nil // a tag of a tree or a blob: read, nothing to walk
		}
	}
	return corrupt(name, errors.New("tags nested too deep"))
}

// commit reads commit h, its tree (all of it) and queues its parents.
func (w *reach) commit(h plumbing.Hash) error {
	if w.seen[h] {
		return nil
	}
	o, err := w.read(h, plumbing.CommitObject, "")
	if err != nil {
		return err
	}
	c, err := object.DecodeCommit(w.r.st, o)
	if err != nil {
		return corrupt("commit "+h.String(), err)
	}
	w.n.Commits++
	if err := w.tree(c.TreeHash, "", h); err != nil {
		return err
	}
	for _, p := range c.ParentHashes {
		if !w.seen[p] {
			w.commits = append(w.commits, p)
		}
	}
	return nil
}

// tree reads the tree h (met at dir in commit at) and everything under it.
func (w *reach) tree(h plumbing.Hash, dir string, at plumbing.Hash) error {
	if w.seen[h] {
		return nil
	}
	where := fmt.Sprintf("%s of commit %s", treeName(dir), at)
	o, err := w.read(h, plumbing.TreeObject, where)
	if err != nil {
		return err
	}
	t, err := object.DecodeTree(w.r.st, o)
	if err != nil {
		return corrupt("tree "+h.String()+" ("+where+")", err)
	}
	for _, e := range t.Entries {
		p := path.Join(dir, e.Name)
		switch e.Mode {
		case filemode.Submodule:
		case filemode.Dir:
			if err := w.tree(e.Hash, p, at); err != nil {
				return err
			}
		default:
			if !w.seen[e.Hash] {
				if _, err := w.read(e.Hash, plumbing.BlobObject, fmt.Sprintf("%s in commit %s", p, at)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// read reads object h of type t (any) to its end and checks its hash; where says where it
// was met, for the error.
func (w *reach) read(h plumbing.Hash, t plumbing.ObjectType, where string) (plumbing.EncodedObject, error) {
	name := t.String()
	if t == plumbing.AnyObject {
		name = "object"
	}
	name += " " + h.String()
	if where != "" {
		name += " (" + where + ")"
	}
	o, err := w.r.st.EncodedObject(t, h)
	if err != nil {
		return nil, corrupt(name, err)
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, corrupt(name, err)
	}
	defer rd.Close()
	hasher := plumbing.NewHasher(o.Type(), o.Size())
	n, err := io.Copy(hasher, rd)
	if err != nil {
		return nil, corrupt(name, err)
	}
	if n != o.Size() || hasher.Sum() != h {
		return nil, corrupt(name, errors.New("its content does not match its id"))
	}
	w.seen[h] = true
	w.n.Objects++
	return o, nil
}

// treeName names a tree in an error: the root tree or a folder.
func treeName(dir string) string {
	if dir == "" {
		return "the root tree"
	}
	return dir + "/"
}

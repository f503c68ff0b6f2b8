package vcs

import (
	"errors"
	"io"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrTooLarge is an earlier version larger than the bound its reader was given.
var ErrTooLarge = errors.New("the earlier version is larger than allowed")

// TreeFile is one file of an earlier version: its path below the entry read ("" for the
// entry itself), its content (a link's target for a link) and its kind.
type TreeFile struct {
	Path string
	Data []byte
	Link bool
	Exec bool
}

// Before reads what p was at the first parent of commit (the change journal's before-image
// in a versioned zone): a file (one TreeFile, Path ""), or every file below a folder (dir
// true, an empty folder has none); ok is false when p did not exist there (or commit has no
// parent). limit bounds the bytes read (ErrTooLarge). commit is a full or abbreviated id
// reachable from HEAD.
func (r *Repo) Before(commit, p string, limit int64) (files []TreeFile, dir, ok bool, err error) {
	l, err := r.Lock()
	if err != nil {
		return nil, false, false, err
	}
	defer l.Unlock()
	c, err := cleanPath(p)
	if err != nil {
		return nil, false, false, err
	}
	cm, err := r.resolve(commit)
	if err != nil {
		return nil, false, false, err
	}
	if len(cm.ParentHashes) == 0 {
		return nil, false, false, nil
	}
	parent, err := object.GetCommit(r.st, cm.ParentHashes[0])
	if err != nil {
		return nil, false, false, corrupt("commit "+cm.ParentHashes[0].String(), err)
	}
	tree, err := parent.Tree()
	if err != nil {
		return nil, false, false, corrupt("tree of commit "+parent.Hash.String(), err)
	}
	if c == "" {
		return nil, false, false, &PathError{Path: p, Err: ErrIsDir}
	}
	te, err := tree.FindEntry(c)
	if err != nil {
		return nil, false, false, nil
	}
	var total int64
	read := func(h plumbing.Hash, rel string, mode filemode.FileMode) error {
		blob, err := object.GetBlob(r.st, h)
		if err != nil {
			return corrupt("blob "+h.String(), err)
		}
		if total += blob.Size; total > limit {
			return ErrTooLarge
		}
		rd, err := blob.Reader()
		if err != nil {
			return corrupt("blob "+h.String(), err)
		}
		defer rd.Close()
		data, err := io.ReadAll(rd)
		if err != nil {
			return corrupt("blob "+h.String(), err)
		}
		files = append(files, TreeFile{Path: rel, Data: data, Link: mode == filemode.Symlink, Exec: mode == filemode.Executable})
		return nil
	}
	if te.Mode != filemode.Dir {
		if te.Mode == filemode.Submodule {
			return nil, false, false, &PathError{Path: c, Err: ErrIsDir}
		}
		return files, false, true, read(te.Hash, "", te.Mode)
	}
	sub, err := object.GetTree(r.st, te.Hash)
	if err != nil {
		return nil, false, false, corrupt("tree "+te.Hash.String(), err)
	}
	w := object.NewTreeWalker(sub, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, false, corrupt("tree "+te.Hash.String(), err)
		}
		if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		if err := read(e.Hash, path.Clean(name), e.Mode); err != nil {
			return nil, false, false, err
		}
	}
	return files, true, true, nil
}

package vcs

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Entry is one commit of the history, newest first.
type Entry struct {
	Hash    string
	Author  string // the author's name only: group zones must not leak e-mails
	Message string // without the trailing newlines the git CLI ends a message with (imported commits)
	When    time.Time
}

// Log returns up to limit commits (all when limit <= 0), newest first, that
// changed path ("" or "." for every commit). A directory path matches commits
// that changed anything under it.
func (r *Repo) Log(p string, limit int) ([]Entry, error) {
	p, err := logPath(p)
	if err != nil {
		return nil, err
	}
	l, err := r.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	_, h, err := r.readHead()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for !h.IsZero() && (limit <= 0 || len(out) < limit) {
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			return out, corrupt("commit "+h.String(), err)
		}
		cur, err := r.entryAt(c.TreeHash, p)
		if err != nil {
			return out, err
		}
		prev, next := plumbing.ZeroHash, plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			next = c.ParentHashes[0]
			pc, err := object.GetCommit(r.st, next)
			if err != nil {
				return out, corrupt("commit "+next.String(), err)
			}
			if prev, err = r.entryAt(pc.TreeHash, p); err != nil {
				return out, err
			}
		}
		if p == "" || cur != prev {
			out = append(out, Entry{Hash: h.String(), Author: c.Author.Name, Message: strings.TrimRight(c.Message, "\n"), When: c.Author.When})
		}
		h = next
	}
	return out, nil
}

// logPath accepts "" as the whole work tree, as Log documents.
func logPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return cleanPath(p)
}

// entryAt returns the id of what path names in tree (zero when absent);
// "" names the tree itself.
func (r *Repo) entryAt(tree plumbing.Hash, p string) (plumbing.Hash, error) {
	if p == "" {
		return tree, nil
	}
	t, err := object.GetTree(r.st, tree)
	if err != nil {
		return plumbing.ZeroHash, corrupt("tree "+tree.String(), err)
	}
	te, err := t.FindEntry(p)
	if err != nil {
		return plumbing.ZeroHash, nil
	}
	return te.Hash, nil
}

// FileAt returns the content of path at revision rev, for restoring an
// earlier version: core writes it back and commits (HEAD never moves
// backwards). rev is "HEAD", "HEAD~N", "HEAD^" or a full or abbreviated
// (at least 4 hex digits) commit id from this branch's history; only
// commits reachable from HEAD are ever read. A symlink yields its target.
func (r *Repo) FileAt(rev, p string) ([]byte, error) {
	l, err := r.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return l.FileAt(rev, p)
}

// FileAt is Repo.FileAt for a holder of the repository lock (the shed_exec guard of group
// zones restores protected files from HEAD before the command's commit).
func (l *Locked) FileAt(rev, p string) ([]byte, error) {
	if _, err := l.held(); err != nil {
		return nil, err
	}
	c, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	if c == "" {
		return nil, &PathError{Path: p, Err: ErrIsDir}
	}
	r := l.r
	commit, err := r.resolve(rev)
	if err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, corrupt("tree of commit "+commit.Hash.String(), err)
	}
	te, err := tree.FindEntry(c)
	if err != nil {
		return nil, &PathError{Path: c, Err: ErrNotFound}
	}
	if te.Mode == filemode.Dir || te.Mode == filemode.Submodule {
		return nil, &PathError{Path: c, Err: ErrIsDir}
	}
	blob, err := object.GetBlob(r.st, te.Hash)
	if err != nil {
		return nil, corrupt("blob "+te.Hash.String(), err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, corrupt("blob "+te.Hash.String(), err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, corrupt("blob "+te.Hash.String(), err)
	}
	return data, nil
}

// resolve finds rev among the commits reachable from HEAD (first parents).
func (r *Repo) resolve(rev string) (*object.Commit, error) {
	notFound := fmt.Errorf("revision %q: %w", rev, ErrNotFound)
	back, prefix := -1, ""
	switch {
	case rev == "HEAD" || rev == "":
		back = 0
	case rev == "HEAD^":
		back = 1
	case strings.HasPrefix(rev, "HEAD~"):
		n, err := strconv.Atoi(rev[len("HEAD~"):])
		if err != nil || n < 0 {
			return nil, notFound
		}
		back = n
	case len(rev) >= 4 && len(rev) <= 40 && isHex(rev):
		prefix = strings.ToLower(rev)
	default:
		return nil, notFound
	}
	_, h, err := r.readHead()
	if err != nil {
		return nil, err
	}
	var found *object.Commit
	for i := 0; !h.IsZero(); i++ {
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			return nil, corrupt("commit "+h.String(), err)
		}
		if i == back {
			return c, nil
		}
		if prefix != "" && strings.HasPrefix(h.String(), prefix) {
			if found != nil {
				return nil, fmt.Errorf("revision %q is ambiguous: %w", rev, ErrNotFound)
			}
			found = c
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	if found == nil {
		return nil, notFound
	}
	return found, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

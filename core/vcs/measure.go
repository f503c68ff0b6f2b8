package vcs

import (
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Measure is the size of the work tree's regular files (symlinks and
// directories weigh nothing, as in core's usage walk) as a full commit saw
// it, so that core can settle a shed_exec's quota without walking the zone
// itself.
type Measure struct {
	// Before is the total the index recorded when the commit started: the
	// work tree as of the previous commit. BeforeExact is false when some
	// entry had no stat data (an index rebuilt from HEAD after a crash or a
	// repair): its size is then unknown and counted as 0.
	Before      int64
	BeforeExact bool
	// After is the total the scan found. AfterExact is false when the scan
	// did not see the whole work tree: a name it never looks into (.git and
	// its aliases), a directory it could not enter, or a file of 4 GiB or
	// more (the index keeps 32 bits of a size, as git does). A commit that
	// failed leaves After 0 and AfterExact false.
	After      int64
	AfterExact bool
}

// scanSeen is the scan's scratch state, read by CommitAllMeasured.
type scanSeen struct {
	partial bool // the scan skipped something that may hold bytes
}

// CommitAllMeasured is CommitAll that also measures the work tree from the
// index before and after the scan: with AfterExact, After is what a walk of
// the work tree summing regular files would have found, at the cost of no
// extra system call. The Measure's before side is filled even when the
// commit then fails.
func (l *Locked) CommitAllMeasured(author Signature, msg string) (string, Measure, error) {
	r, err := l.held()
	if err != nil {
		return "", Measure{}, err
	}
	var m Measure
	r.seen = scanSeen{}
	h, err := r.commitWith(author, msg, func(rootfd int) error {
		m.Before, m.BeforeExact = indexBytes(r.s.idx)
		if err := r.syncPath(rootfd, ""); err != nil {
			return err
		}
		m.After, m.AfterExact = indexBytes(r.s.idx)
		m.AfterExact = m.AfterExact && !r.seen.partial
		return nil
	})
	if err != nil {
		m.After, m.AfterExact = 0, false
	}
	return h, m, err
}

// indexBytes sums the sizes of the regular files in entries; false when an
// entry has no stat data.
func indexBytes(entries []*index.Entry) (int64, bool) {
	var n int64
	exact := true
	for _, e := range entries {
		if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
			continue
		}
		if e.ModifiedAt.IsZero() {
			exact = false
		}
		n += int64(e.Size)
	}
	return n, exact
}

// Ignored reports whether a work-tree-relative path has a component that is
// never versioned (.git and its aliases), or is no valid work-tree path:
// what such paths hold is invisible to commits and so to Measure.
func Ignored(p string) bool {
	c, err := cleanPath(p)
	return err != nil || ignoredPath(c)
}

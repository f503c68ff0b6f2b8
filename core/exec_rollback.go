package core

import (
	"bytes"
	"golang.org/x/sys/unix"
	"maps"
	"os"
	"path"
	"slices"
	"time"
)

// Rollback of a command that ended over the quota (exec_quota.go). What it undoes:
//
//   - everywhere: every name the command created (absent from the snapshot taken before
//     it ran) is removed, folders with their content;
//   - in versioned zones (documents, group): every file the command changed or deleted is
//     written back from HEAD, which is the zone as it was before the command (every
//     earlier change was committed);
//   - in Storage (no history): a file the command grew is truncated back to its size
//     before the command (bytes it changed in place below that size stay changed), and a
//     file it deleted stays deleted (listed as lost).
//
// It runs while the owner's writing commands are serialised, so no other command's changes
// are touched; a file another tool call created in Storage during the command would be
// removed with the command's own.

// ctimeSlack covers the kernel's coarse timestamp clock: a change made after start may
// carry a ctime up to one tick earlier.
const ctimeSlack = 50 * time.Millisecond

// rolledBack lists what a rollback did, by zone-relative path.
type rolledBack struct {
	removed, truncated, restored, lost []string
}

// details is the rolled_back object of the QUOTA_EXCEEDED answer (counts, and at most 20
// names of what could not be restored).
func (rb rolledBack) details(versioned bool) map[string]any {
	d := map[string]any{"removed": len(rb.removed), "truncated": len(rb.truncated), "restored": len(rb.restored),
		"lost": rb.lost[:min(len(rb.lost), 20)]}
	if versioned {
		d["note"] = "files the command changed or deleted were restored from the last commit"
	} else {
		d["note"] = "storage has no history: files the command deleted are lost, and grown files were cut back to their old size"
	}
	return d
}

// undo removes what the command created and, in Storage, cuts grown files back; it
// returns the paths that a versioned zone must restore from HEAD (restoreFromHead, after
// the repository lock is released).
func (q *execQuota) undo(after snapshot) (rb rolledBack, fromHead []string) {
	z, before := q.z, q.before
	// Names are used as the command wrote them (a backslash or an NFD name is one name
	// here, which the path rules of z.Fs would rewrite): os.Root keeps them in the zone.
	root, err := os.OpenRoot(z.Fs.Dir())
	if err != nil {
		return rb, nil
	}
	defer root.Close()
	removedDirs := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(after.entries)) {
		if underAny(p, removedDirs) {
			continue // went with its folder
		}
		now, old, existed := after.entries[p], before.entries[p], false
		if e, ok := before.entries[p]; ok && e.dir == now.dir && e.other == now.other {
			existed = true
		}
		switch {
		case !existed:
			if root.RemoveAll(p) == nil {
				rb.removed = append(rb.removed, p)
				if now.dir {
					removedDirs[p] = true
				}
			}
		case now.dir || now.other:
		case z.Versioned && (now.size != old.size || !now.ctime.Before(q.start.Add(-ctimeSlack))):
			fromHead = append(fromHead, p)
		case !z.Versioned && now.size > old.size:
			if truncateTo(root, p, old.size) {
				rb.truncated = append(rb.truncated, p)
			}
		}
	}
	for p, e := range before.entries {
		if e.dir || e.other {
			continue
		}
		if now, ok := after.entries[p]; ok && !now.dir && !now.other {
			continue
		}
		if z.Versioned {
			fromHead = append(fromHead, p)
		} else {
			rb.lost = append(rb.lost, p)
		}
	}
	slices.Sort(rb.lost)
	return rb, fromHead
}

// underAny reports whether a parent folder of p is in dirs.
func underAny(p string, dirs map[string]bool) bool {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if dirs[d] {
			return true
		}
	}
	return false
}

// truncateTo cuts the regular file p of the zone back to size bytes.
func truncateTo(root *os.Root, p string, size int64) bool {
	f, err := root.OpenFile(p, os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Truncate(size) == nil
}

// restoreFromHead writes paths back from the zone's last commit, under the zone's gate
// (no other writer of the zone runs meanwhile). A path HEAD does not hold is lost.
func (s *Service) restoreFromHead(z *Zone, paths []string, rb *rolledBack) {
	if len(paths) == 0 {
		return
	}
	r, err := s.repo(z)
	if err != nil {
		rb.lost = append(rb.lost, paths...)
		return
	}
	defer r.release()
	g := &r.gate
	g.Lock()
	defer g.Unlock()
	for _, p := range paths {
		data, err := r.FileAt("HEAD", p)
		if err == nil {
			if fi, _, serr := z.Fs.LstatIfPossible(p); serr == nil && fi.IsDir() {
				_ = z.Fs.RemoveAll(p)
			}
			if dir := path.Dir(p); dir != "." {
				err = z.Fs.MkdirAll(dir, 0o700)
			}
		}
		if err == nil {
			_, err = z.Fs.WriteAtomic(p, bytes.NewReader(data), 0o600)
		}
		if err != nil {
			rb.lost = append(rb.lost, p)
			continue
		}
		rb.restored = append(rb.restored, p)
	}
	slices.Sort(rb.lost)
}

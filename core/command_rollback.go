package core

import (
	"errors"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/vcs"
)

// Rollback of a command that ended over the quota (command_quota.go). What it undoes:
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
// are touched. In versioned zones it runs with the zone's gate held exclusively, and a file
// written beside the command (beside.go) is left as that write left it (put back so
// when the command changed it since); in Storage, where nothing can be put back, a file or
// folder written beside the command is left as it is.

// ctimeSlack covers the kernel's coarse timestamp clock: a change made after start may
// carry a ctime up to one tick earlier.
const ctimeSlack = 50 * time.Millisecond

// rolledBack lists what a rollback did, by zone-relative path.
type rolledBack struct {
	removed, truncated, restored, lost []string
}

// rollbackDetails is the rolled_back object of the QUOTA_EXCEEDED answer (fields in the
// order of the JSON keys, alphabetical, as the map it replaces wrote them).
type rollbackDetails struct {
	Lost      []string `json:"lost"`
	Note      string   `json:"note"`
	Removed   int      `json:"removed"`
	Restored  int      `json:"restored"`
	Truncated int      `json:"truncated"`
}

// details is the rolled_back object of the QUOTA_EXCEEDED answer (counts, and at most 20
// names of what could not be restored).
func (rb rolledBack) details(versioned bool) rollbackDetails {
	d := rollbackDetails{Lost: rb.lost[:min(len(rb.lost), 20)], Removed: len(rb.removed), Restored: len(rb.restored),
		Truncated: len(rb.truncated)}
	if versioned {
		d.Note = "files the command changed or deleted were restored from the last commit"
	} else {
		d.Note = "storage has no history: files the command deleted are lost, and grown files were cut back to their old size"
	}
	return d
}

// undo removes what the command created and, in Storage, cuts grown files back; it
// returns the files a versioned zone must put back (restoreVersions), each with its version.
func (q *cmdQuota) undo(after Snapshot) (rb rolledBack, restore map[string]Version) {
	z, before := q.z, q.before
	restore = map[string]Version{}
	// Names are used as the command wrote them (a backslash or an NFD name is one name
	// here, which the path rules of z.Fs would rewrite): os.Root keeps them in the zone.
	root, err := os.OpenRoot(z.fs.Dir())
	if err != nil {
		return rb, nil
	}
	defer root.Close()
	beside := map[string]bool{}
	if q.beside != nil {
		st, err := NewStatter(z)
		if err != nil {
			return rb, nil
		}
		for _, p := range q.beside.Paths() {
			if w, intact, _ := q.beside.Touched(st, p); !intact {
				restore[p] = w.Version()
			}
			beside[p] = true
		}
		st.Close()
	}
	removedDirs := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(after.Entries)) {
		if beside[p] || underAny(p, beside) || underAny(p, removedDirs) {
			continue // written beside the command (a folder in Storage: with its content), or went with its folder
		}
		now, old, existed := after.Entries[p], before.Entries[p], false
		if e, ok := before.Entries[p]; ok && e.Dir == now.Dir && e.Other == now.Other {
			existed = true
		}
		switch {
		case !existed && now.Dir && q.beside.Holds(p):
			// A folder holding files written beside the command: its other names go one by one.
		case !existed:
			if root.RemoveAll(p) == nil {
				rb.removed = append(rb.removed, p)
				if now.Dir {
					removedDirs[p] = true
				}
			}
		case now.Dir || now.Other:
		case z.Versioned && (now.Size != old.Size || !now.Ctime.Before(q.start.Add(-ctimeSlack))):
			restore[p] = Version{}
		case !z.Versioned && now.Size > old.Size:
			if truncateTo(root, p, old.Size) {
				rb.truncated = append(rb.truncated, p)
			}
		}
	}
	for p, e := range before.Entries {
		if e.Dir || e.Other || beside[p] || underAny(p, beside) {
			continue
		}
		if now, ok := after.Entries[p]; ok && !now.Dir && !now.Other {
			continue
		}
		if z.Versioned {
			restore[p] = Version{}
		} else {
			rb.lost = append(rb.lost, p)
		}
	}
	slices.Sort(rb.lost)
	return rb, restore
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

// restoreVersions puts files back in a versioned zone, each as its version holds it, under
// l, the repository lock (the zone's gate is held exclusively: no other writer runs). A file
// its version does not hold is removed when the version is a fixed one (a file written
// beside the command that had none before), else lost.
func restoreVersions(l *vcs.Locked, z *Zone, files map[string]Version, rb *rolledBack) {
	for _, p := range slices.Sorted(maps.Keys(files)) {
		v := files[p]
		switch err := putBack(l, z.fs, p, v); {
		case errors.Is(err, errNoVersion) && v.Fixed:
			if z.fs.RemoveAll(p) == nil {
				rb.removed = append(rb.removed, p)
			}
		case err != nil:
			rb.lost = append(rb.lost, p)
		default:
			rb.restored = append(rb.restored, p)
		}
	}
	slices.Sort(rb.lost)
}

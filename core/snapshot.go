package core

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// entry is one name of a zone snapshot.
type entry struct {
	Size  int64 // regular files
	Dir   bool
	Other bool // neither a regular file nor a directory (symlink, FIFO, ...)
	Ctime time.Time
	// Link is a symlink's target as stored, so that a link a command retargets (same
	// name, new target) is a change (SweepProtected).
	Link string
}

// Snapshot is a zone's names and the total size of its regular files.
type Snapshot struct {
	Entries map[string]entry
	total   int64
}

// Usage is what the snapshot holds against the quota: its bytes and its names.
func (s Snapshot) Usage() Amount { return Amount{Bytes: s.total, Files: int64(len(s.Entries))} }

// TakeSnapshot walks root without following symbolic links (walk.go: one folder open at a
// time, so no depth of tree defeats it): names are read with getdents and only regular
// files are stat'ed, relative to their folder (fstatat), so no path is resolved twice.
// Names that vanish during the walk (a command still running) are skipped; a folder it
// cannot read is an error (the measure must be whole).
func TakeSnapshot(root string) (Snapshot, error) {
	s := Snapshot{Entries: map[string]entry{}}
	w := treeWalk{visit: func(dirfd int, rel string, e walkEnt) (bool, error) {
		switch {
		case e.typ&fs.ModeDir != 0:
			s.Entries[rel] = entry{Dir: true}
			return true, nil
		case e.typ.IsRegular():
			var st unix.Stat_t
			if err := unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
				return false, nil
			} else if err != nil {
				return false, &fs.PathError{Op: "stat", Path: rel, Err: err}
			}
			s.Entries[rel] = entry{Size: st.Size, Ctime: time.Unix(st.Ctim.Unix())}
			s.total += st.Size
		case e.typ&fs.ModeSymlink != 0:
			target, _ := readlinkAt(dirfd, e.name) // "" when it vanished meanwhile
			s.Entries[rel] = entry{Other: true, Link: target}
		default:
			s.Entries[rel] = entry{Other: true}
		}
		return false, nil
	}}
	return s, w.run(context.Background(), root)
}

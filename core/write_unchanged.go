package core

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// unchangedAtEnd passes a write's body through and, when it ends, checks that the file it
// replaces is still the one Begin described under the path lock. The lock keeps fileshed's
// own writers out, but a command of the zone (shed_exec, beside the write) may rewrite the
// file meanwhile: a write built from the old content (an append, a streamed edit, a
// conversion) would then drop the command's change, and even a whole replacement would
// undo it unseen. So the write stops before its rename with ErrChangedMeanwhile
// (FILE_LOCKED: retry) and the file keeps what the command wrote.
type unchangedAtEnd struct {
	r    io.Reader
	z    *Zone
	t    Target
	done bool
}

func (u *unchangedAtEnd) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err == io.EOF && !u.done {
		u.done = true
		if !sameFile(u.t.Info, u.z, u.t.Rel) {
			return n, ErrChangedMeanwhile
		}
	}
	return n, err
}

// sameFile reports whether rel (followed) is still was: the same inode, size and
// modification time.
func sameFile(was fs.FileInfo, z *Zone, rel string) bool {
	now, err := z.fs.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) || err == nil && (now.Size() != was.Size() || !now.ModTime().Equal(was.ModTime())) {
		return false
	}
	if err != nil {
		return true // not a change we can see; the write reports its own errors
	}
	a, ok1 := was.Sys().(*syscall.Stat_t)
	b, ok2 := now.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || a.Ino == b.Ino && a.Dev == b.Dev
}

package confine

import (
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// MoveTo renames oldname of f to newname of dst (another zone on the same file
// system, or f itself) in one renameat2 call: atomic, so a crash leaves the
// entry at exactly one of the two places. Each parent directory is resolved
// inside its own zone (symlinks followed only while they stay inside); the
// last components are never followed, so a symlink is moved as a link. The
// destination's parent must exist. With noReplace an existing newname is
// fs.ErrExist (checked by the kernel, no race); without it an existing file
// is replaced atomically. Zones on different file systems give EXDEV. Neither
// zone root can be moved or replaced. Both directories are synced afterwards.
func (f *Fs) MoveTo(oldname string, dst *Fs, newname string, noReplace bool) error {
	const op = "rename"
	o, err := f.path(op, oldname)
	if err == nil {
		err = notRoot(op, oldname, o)
	}
	if err != nil {
		return err
	}
	n, err := dst.path(op, newname)
	if err == nil {
		err = notRoot(op, newname, n)
	}
	if err != nil {
		return err
	}
	from, err := f.root.Open(rel(parent(o)))
	if err != nil {
		return fail(op, oldname, err)
	}
	defer from.Close()
	to, err := dst.root.Open(rel(parent(n)))
	if err != nil {
		return fail(op, newname, err)
	}
	defer to.Close()
	flags := uint(0)
	if noReplace {
		flags = unix.RENAME_NOREPLACE
	}
	err = withFd(from, func(fromFd int) error {
		return withFd(to, func(toFd int) error {
			return unix.Renameat2(fromFd, path.Base(o), toFd, path.Base(n), flags)
		})
	})
	if err != nil {
		// Name the side at fault: if the source is there, the destination is.
		if _, lerr := f.root.Lstat(o); lerr == nil {
			return fail(op, newname, err)
		}
		return fail(op, oldname, err)
	}
	// Durable: both directories are synced. Why failures are not reported: the rename is
	// done and visible; calling it failed would invite a retry of a move that happened.
	_ = to.Sync()
	_ = from.Sync()
	return nil
}

// parent is the clean parent of a clean, non-root path ("" for the zone root).
func parent(c string) string {
	if d := path.Dir(c); d != "." {
		return d
	}
	return ""
}

// withFd runs fn with the descriptor of d, kept valid for the call.
func withFd(d *os.File, fn func(fd int) error) error {
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

package core

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/vcs"
)

// The one "put back" of the guards: a file a command was not allowed to change is written
// back as it was — from a version of the repository by the ownership guard of group zones
// after the command, by its rollback over the quota, and by the recovery of a command killed
// with its server (recover_commands.go); from the copy taken before the command by the lock
// guard (command_locks.go). putBackFrom is the one writer.

// errNoVersion says that the version to put a file back to does not hold it.
var errNoVersion = errors.New("the version does not hold the file")

// putBack writes p back as version v holds it (errNoVersion, nothing changed, when it does
// not).
func putBack(l *vcs.Locked, fsys *confine.Fs, p string, v Version) error {
	rev := "HEAD"
	if v.Fixed {
		rev = v.Rev
	}
	if rev == "" {
		return errNoVersion
	}
	content, err := l.FileAt(rev, p)
	if errors.Is(err, vcs.ErrNotFound) {
		return errNoVersion
	}
	if err != nil {
		return err
	}
	return putBackFrom(fsys, p, bytes.NewReader(content))
}

// putBackCopy writes p back from cp, the host path of a copy taken before the command.
func putBackCopy(fsys *confine.Fs, p, cp string) error {
	f, err := os.Open(cp)
	if err != nil {
		return err
	}
	defer f.Close()
	return putBackFrom(fsys, p, f)
}

// putBackFrom writes p with the bytes of r (mode 0600): whatever stands in the way (a link
// or a file where a folder was, a link or a folder where the file was) is removed first, so
// nothing is written through a link.
func putBackFrom(fsys *confine.Fs, p string, r io.Reader) error {
	for _, d := range ancestors(p) {
		fi, _, err := fsys.LstatIfPossible(d)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil {
			if err := fsys.Remove(d); err != nil {
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := fsys.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if fi, _, err := fsys.LstatIfPossible(p); err == nil && !fi.Mode().IsRegular() {
		if err := fsys.RemoveAll(p); err != nil {
			return err
		}
	}
	_, err := fsys.WriteAtomic(p, r, 0o600)
	return err
}

// notRestored is the error of a protected file a guard could not put back.
func notRestored(p string, err error) *Error {
	return Errf(ExecutionError, "A protected file changed by the command could not be restored: %s", p).
		With("path", p).Because(err).WithHint("Run shed_info(action='maintenance'), then check the file with shed_version(action='history')")
}

// ancestors lists the folders above p, outermost first ("a/b/c" -> "a", "a/b").
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != ""; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

package core

import (
	"bytes"
	"errors"
	"io/fs"
	"path"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/vcs"
)

// The one "put back" of the guards: a file a command was not allowed to change is written
// back as a version holds it — by the shed_exec guard of group zones after the command, by
// its rollback over the quota, and by the recovery of a command killed with its server
// (recover_commands.go).

// ErrNoVersion says that the version to put a file back to does not hold it.
var ErrNoVersion = errors.New("the version does not hold the file")

// PutBack writes p back as version v holds it (ErrNoVersion, nothing changed, when it does
// not): whatever stands in the way (a link or a file where a folder was, a link or a
// folder where the file was) is removed first.
func PutBack(l *vcs.Locked, fsys *confine.Fs, p string, v Version) error {
	rev := "HEAD"
	if v.Fixed {
		rev = v.Rev
	}
	if rev == "" {
		return ErrNoVersion
	}
	content, err := l.FileAt(rev, p)
	if errors.Is(err, vcs.ErrNotFound) {
		return ErrNoVersion
	}
	if err != nil {
		return err
	}
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
	_, err = fsys.WriteAtomic(p, bytes.NewReader(content), 0o600)
	return err
}

// ancestors lists the folders above p, outermost first ("a/b/c" -> "a", "a/b").
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != ""; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

package vcs

import (
	"errors"
	"fmt"
	"os"
)

var (
	// ErrInvalidPath is returned for a path that is absolute, empty, climbs
	// out with "..", or contains NUL.
	ErrInvalidPath = errors.New("invalid path")
	// ErrSymlinkInPath is returned when a parent component of a path is a
	// symbolic link: the link is never followed.
	ErrSymlinkInPath = errors.New("path goes through a symbolic link")
	// ErrNotFound is returned when a path or revision does not exist in the
	// history.
	ErrNotFound = errors.New("not found")
	// ErrIsDir is returned by FileAt when the path names a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrCorrupt is returned when the repository cannot be read; Repair may
	// fix it (stale locks, a broken index); a broken HEAD commit needs an
	// operator.
	ErrCorrupt = errors.New("repository corrupted")
	// ErrBusy is returned when a git lock file exists while this process
	// holds the repository lock, or the branch moved under us: another
	// program is writing the repository.
	ErrBusy = errors.New("repository busy")
	// ErrChanged is returned when a file kept changing while it was read.
	ErrChanged = errors.New("file changed while being committed")
	// ErrUnlocked is returned by a Locked handle used after Unlock.
	ErrUnlocked = errors.New("repository lock already released")
)

// PathError ties an error to a work-tree-relative path (never a host path).
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// corrupt wraps a low-level read failure as ErrCorrupt without exposing host
// paths: what names the part of the repository in git terms.
func corrupt(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, what, scrub(err))
}

// scrub drops the host path that *os.PathError and *os.LinkError carry, so
// no message built here can leak where the storage lives.
func scrub(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

package core

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"syscall"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
)

// target is what a write is about to replace: the zone-relative path and, when it exists,
// the size and whether it is reached through a symlink.
type target struct {
	rel     string
	shown   string // the path as the model gave it (messages)
	exists  bool
	size    int64
	symlink bool
}

// lockPath serialises the writers of one file of one zone in this process (size read,
// reservation, write, settle), so the accounted delta is the real one.
func (s *Service) lockPath(z *Zone, rel string) func() {
	return s.paths.Lock(z.Fs.Dir() + "\x00" + rel)
}

// statTarget describes the file a write will replace. The zone root and directories are
// NOT_A_FILE; a parent that is a file is INVALID_PATH; a symlink leaving the zone (even a
// dangling one) is PATH_ESCAPE. A missing file is not an error (exists=false).
// patchTarget takes the file's write lock and stats the target of a patch; with safe, a
// file another conversation holds in a locked edit is refused. A position other than
// start/end needs an existing file (create says how to make it). The caller releases the
// lock with unlock, also on error.
func (s *Service) patchTarget(ctx context.Context, c Caller, z *Zone, rel, shown string, safe bool, position, create string) (t target, unlock func(), err error) {
	unlock = s.lockPath(z, rel)
	if t, err = statTarget(z, rel, shown); err != nil {
		return t, unlock, err
	}
	if safe {
		if err := s.checkUnlocked(ctx, c, z, rel); err != nil {
			return t, unlock, err
		}
	}
	if !t.exists && position != "start" && position != "end" {
		return t, unlock, Errf(FileNotFound, "File not found: %s", shown).With("path", shown).With("zone", z.Label).
			WithHint("Position '%s' needs an existing file: %s", position, create)
	}
	return t, unlock, nil
}

func statTarget(z *Zone, rel, shown string) (target, error) {
	t := target{rel: rel, shown: shown}
	if rel == "" {
		return t, Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	}
	if li, _, err := z.Fs.LstatIfPossible(rel); err == nil {
		t.symlink = li.Mode()&fs.ModeSymlink != 0
	}
	fi, err := z.Fs.Stat(rel)
	switch {
	case err == nil && fi.IsDir():
		return t, Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	case err == nil && !fi.Mode().IsRegular():
		return t, Errf(NotAFile, "Path is not a regular file: %s", shown).With("path", shown).With("zone", z.Label)
	case err == nil:
		t.exists, t.size = true, fi.Size()
		return t, nil
	case errors.Is(err, syscall.ENOTDIR):
		return t, parentNotDir(z, shown)
	case errors.Is(err, fs.ErrNotExist) && t.symlink:
		// A dangling symlink: the write would create its target. Confined resolves it the way
		// the kernel would and refuses a target outside the zone.
		if _, cerr := z.Fs.Confined(rel); cerr != nil {
			return t, writeError(cerr, z, shown)
		}
		return t, nil
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	}
	return t, writeError(err, z, shown)
}

// parentNotDir is the error of a path whose parent is a file.
func parentNotDir(z *Zone, shown string) *Error {
	return Errf(InvalidPath, "A parent of %s is a file, not a folder", shown).With("path", shown).With("zone", z.Label).
		WithHint("Choose a path whose folders are folders (see shed_tree), or rename the file in the way")
}

// writeError maps a confinement or file system error of a write to the catalogue.
func writeError(err error, z *Zone, shown string) *Error {
	switch {
	case errors.Is(err, confine.ErrIsDir):
		return Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	case errors.Is(err, confine.ErrNotDir), errors.Is(err, syscall.ENOTDIR):
		return parentNotDir(z, shown)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return Errf(QuotaExceeded, "The server's disk is full").With("path", shown).Because(err).
			WithHint("Free space with shed_delete, or ask an administrator to free disk space")
	}
	return pathError(err, z, shown)
}

// write is one whole-file write: the resulting content streamed from body, size bytes long.
type write struct {
	tool, message string
	t             target
	size          int64
	body          io.Reader
	// mode is the ownership mode of a file this write creates in a group zone ("" =
	// group_default_mode).
	mode string
}

// writeFile performs w in zone z for c: the file-size check and the quota reservation of
// the growth (bytes, and a name for a new file) happen before anything touches the disk; then, inside s.mutate (the commit in
// versioned zones), missing parents are created (0700) and the content is written
// atomically (temporary file, fsync, rename, fsync of the directory; new files 0600);
// finally the reservation is settled with the real delta. It returns the commit id ("" if
// none). The caller holds s.lockPath for the file.
func (s *Service) writeFile(ctx context.Context, c Caller, z *Zone, w write) (string, error) {
	old, kind := int64(0), writeCreate
	if w.t.exists {
		old, kind = w.t.size, writeModify
	}
	if _, err := s.groupMode(w.mode); err != nil {
		return "", err
	}
	if err := s.checkGroupWrite(ctx, c, z, kind, w.t.rel); err != nil {
		return "", err
	}
	files := int64(0)
	if !w.t.exists {
		files = 1
	}
	r, err := s.reserve(ctx, z, w.size, amount{Bytes: w.size - old, Files: files})
	if err != nil {
		return "", err
	}
	if !w.t.exists {
		if err := s.recordGroupFiles(ctx, c, z, w.mode, w.t.rel); err != nil {
			r.Settle(ctx, amount{})
			return "", err
		}
	}
	var delta amount
	mut := s.mutateFile
	if w.t.symlink {
		mut = s.mutate // the content goes to the link's target: a full detection commits it
	}
	hash, err := mut(c, z, w.tool, w.message, func() (Change, error) {
		if err := r.mkdirAll(ctx, z.Fs, path.Dir(w.t.rel)); err != nil {
			return Change{}, writeError(err, z, w.t.shown)
		}
		n, err := z.Fs.WriteAtomic(w.t.rel, w.body, 0o600)
		if err != nil {
			return Change{}, writeError(err, z, w.t.shown)
		}
		delta = amount{Bytes: n - old, Files: files}
		ch := changeOf(w.t)
		ch.Growth = delta
		return ch, nil
	})
	r.Settle(ctx, delta)
	if err != nil && !w.t.exists && !fileExists(z, w.t.rel) {
		s.dropGroupRecords(ctx, z, physicalRel(z, w.t.rel))
	}
	return hash, err
}

// changeOf is the versioning change of a write: the path itself, or a full detection when
// the path is a symlink (the content went to its target, whose name we do not know here).
func changeOf(t target) Change {
	if t.symlink {
		return Change{All: true}
	}
	return Change{Paths: []string{t.rel}}
}

// openOld opens the existing file of t, to stream it into its new version.
func openOld(z *Zone, t target) (afero.File, error) {
	f, err := z.Fs.Open(t.rel)
	if err != nil {
		return nil, writeError(err, z, t.shown)
	}
	return f, nil
}

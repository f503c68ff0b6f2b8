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
	"github.com/fileshed/fileshed/core/lock"
)

// target is what a step of a write is about to change: the zone-relative path and, when it
// exists, its size (regular files), whether it is a folder and whether it is (written:
// reached through) a symlink.
type target struct {
	rel     string
	shown   string // the path as the model gave it (messages)
	exists  bool
	size    int64
	dir     bool
	symlink bool
	// info is the entry itself (not followed), for the steps other than OpWrite.
	info fs.FileInfo
}

// lockPath serialises the writers of one file of one zone (size read, reservation, write,
// settle), so the accounted delta is the real one; the wait ends with ctx.
func (s *Service) lockPath(ctx context.Context, z *Zone, rel string) (func(), error) {
	return s.hold(ctx, fileKey(z, rel), lock.Exclusive, "another change of "+rel)
}

// lockEdit serialises the steps of one locked edit of p in z.
func (s *Service) lockEdit(ctx context.Context, z *Zone, p string) (func(), error) {
	return s.hold(ctx, editKey(z, p), lock.Exclusive, "another locked-edit step on "+p)
}

// beginWrite starts the transaction of one whole-file write of rel in z (Tx): e names the
// change, its one step is set here. The caller closes the transaction.
func (s *Service) beginWrite(ctx context.Context, c Caller, z *Zone, rel, shown string, e Edit) (*Tx, target, error) {
	e.Steps = []Step{{Zone: z, Path: rel, Shown: shown, Op: OpWrite}}
	tx, err := s.Begin(ctx, c, e)
	if err != nil {
		return nil, target{}, err
	}
	return tx, tx.Target(0), nil
}

// needsFile is FILE_NOT_FOUND for a patch at a position other than start/end of a file
// that does not exist; create says how to make it.
func needsFile(z *Zone, shown, position, create string) error {
	return Errf(FileNotFound, "File not found: %s", shown).With("path", shown).With("zone", z.Label).
		WithHint("Position '%s' needs an existing file: %s", position, create)
}

// statTarget describes the file a write will replace. The zone root and directories are
// NOT_A_FILE; a parent that is a file is INVALID_PATH; a symlink leaving the zone (even a
// dangling one) is PATH_ESCAPE. A missing file is not an error (exists=false).
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
	size int64
	body io.Reader
}

// writeFile writes w as the content of the transaction's one file (beginWrite): the
// file-size check and the quota reservation of the growth (bytes, and a name for a new
// file) happen before anything touches the disk; then, in the zone's versioning, missing
// parents are created (0700) and the content is written atomically (temporary file, fsync,
// rename, fsync of the directory; new files 0600). It returns the commit id ("" if none).
func (tx *Tx) writeFile(w write) (string, error) {
	t, z := tx.targets[0], tx.e.Steps[0].Zone
	old, files := int64(0), int64(1)
	if t.exists {
		old, files = t.size, 0
	}
	if err := tx.Reserve(z, w.size, amount{Bytes: w.size - old, Files: files}); err != nil {
		return "", err
	}
	return tx.Apply(func() (Change, error) {
		if err := tx.r.mkdirAll(tx.ctx, z.Fs, path.Dir(t.rel)); err != nil {
			return Change{}, writeError(err, z, t.shown)
		}
		n, err := z.Fs.WriteAtomic(t.rel, w.body, 0o600)
		if err != nil {
			return Change{}, writeError(err, z, t.shown)
		}
		ch := changeOf(t)
		ch.Growth = amount{Bytes: n - old, Files: files}
		return ch, nil
	})
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

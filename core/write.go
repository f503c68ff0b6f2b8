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

// Target is what a step of a write is about to change: the zone-relative path and, when it
// exists, its size (regular files), whether it is a folder and whether it is (written:
// reached through) a symlink.
type Target struct {
	Rel     string
	Shown   string // the path as the model gave it (messages)
	Exists  bool
	Size    int64
	Dir     bool
	Symlink bool
	// Info is the entry itself (not followed) for the steps other than OpWrite; for OpWrite,
	// the existing file (followed), which WriteFile checks is unchanged when it renames.
	Info fs.FileInfo
}

// LockPath serialises the writers of one file of one zone (size read, reservation, write,
// settle), so the accounted delta is the real one; the wait ends with ctx.
func (s *Service) LockPath(ctx context.Context, z *Zone, rel string) (func(), error) {
	return s.Hold(ctx, fileKey(z, rel), lock.Exclusive, "another change of "+rel)
}

// LockEdit serialises the steps of one locked edit of p in z.
func (s *Service) LockEdit(ctx context.Context, z *Zone, p string) (func(), error) {
	le, err := s.EditLease(ctx, z, p)
	if err != nil {
		return nil, err
	}
	return le.Unlock, nil
}

// EditLease is LockEdit returning the lease, for a holder that checks it before its change
// (CheckLeases: shed_maintenance's removal of a working copy).
func (s *Service) EditLease(ctx context.Context, z *Zone, p string) (lock.Lease, error) {
	return s.hold(ctx, editKey(z, p), lock.Exclusive, "another locked-edit step on "+p)
}

// BeginWrite starts the transaction of one whole-file write of rel in z (Tx): e names the
// change, its one step is set here. The caller closes the transaction.
func (s *Service) BeginWrite(ctx context.Context, c Caller, z *Zone, rel, shown string, e Edit) (*Tx, Target, error) {
	e.Steps = []Step{{Zone: z, Path: rel, Shown: shown, Op: OpWrite, Expect: e.Expect}}
	tx, err := s.Begin(ctx, c, e)
	if err != nil {
		return nil, Target{}, err
	}
	return tx, tx.Target(0), nil
}

// CheckWrite answers what BeginWrite would refuse for a whole-file write of rel in z
// (protected path, locked edit of another conversation, group ownership, a wait that ends)
// without holding anything: for a tool whose write comes after long work (a query's CSV
// export), so that a refused call does that work, and leaves its traces, not at all. The
// write itself still goes through BeginWrite, which checks again.
func (s *Service) CheckWrite(ctx context.Context, c Caller, z *Zone, rel, shown string, e Edit) error {
	tx, _, err := s.BeginWrite(ctx, c, z, rel, shown, e)
	if err == nil {
		tx.Close()
	}
	return err
}

// NeedsFile is FILE_NOT_FOUND for a patch at a position other than start/end of a file
// that does not exist; create says how to make it.
func NeedsFile(z *Zone, shown, position, create string) error {
	return Errf(FileNotFound, "File not found: %s", shown).With("path", shown).With("zone", z.Label).
		WithHint("Position '%s' needs an existing file: %s", position, create)
}

// StatTarget describes the file a write will replace. The zone root and directories are
// NOT_A_FILE; a parent that is a file is INVALID_PATH; a symlink leaving the zone (even a
// dangling one) is PATH_ESCAPE. A missing file is not an error (exists=false).
func StatTarget(z *Zone, rel, shown string) (Target, error) {
	t := Target{Rel: rel, Shown: shown}
	if rel == "" {
		return t, Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	}
	if li, _, err := z.fs.LstatIfPossible(rel); err == nil {
		t.Symlink = li.Mode()&fs.ModeSymlink != 0
	}
	fi, err := z.fs.Stat(rel)
	switch {
	case err == nil && fi.IsDir():
		return t, Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	case err == nil && !fi.Mode().IsRegular():
		return t, Errf(NotAFile, "Path is not a regular file: %s", shown).With("path", shown).With("zone", z.Label)
	case err == nil:
		t.Exists, t.Size, t.Info = true, fi.Size(), fi
		return t, nil
	case errors.Is(err, syscall.ENOTDIR):
		return t, ParentNotDir(z, shown)
	case errors.Is(err, fs.ErrNotExist) && t.Symlink:
		// A dangling symlink: the write would create its target. Confined resolves it the way
		// the kernel would and refuses a target outside the zone.
		if _, cerr := z.fs.Confined(rel); cerr != nil {
			return t, WriteError(cerr, z, shown)
		}
		return t, nil
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	}
	return t, WriteError(err, z, shown)
}

// ParentNotDir is the error of a path whose parent is a file.
func ParentNotDir(z *Zone, shown string) *Error {
	return Errf(InvalidPath, "A parent of %s is a file, not a folder", shown).With("path", shown).With("zone", z.Label).
		WithHint("Choose a path whose folders are folders (see shed_tree), or rename the file in the way")
}

// WriteError maps a confinement or file system error of a write to the catalogue.
func WriteError(err error, z *Zone, shown string) *Error {
	switch {
	case errors.Is(err, confine.ErrIsDir):
		return Errf(NotAFile, "Path is a directory, not a file: %s", shown).With("path", shown).With("zone", z.Label)
	case errors.Is(err, confine.ErrNotDir), errors.Is(err, syscall.ENOTDIR):
		return ParentNotDir(z, shown)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return Errf(QuotaExceeded, "The server's disk is full").With("path", shown).Because(err).
			WithHint("Free space with shed_delete, or ask an administrator to free disk space")
	}
	return PathError(err, z, shown)
}

// Write is one whole-file write: the resulting content streamed from body, size bytes long.
type Write struct {
	Size int64
	Body io.Reader
}

// WriteFile writes w as the content of the transaction's one file (beginWrite): the
// file-size check and the quota reservation of the growth (bytes, and a name for a new
// file) happen before anything touches the disk; then, in the zone's versioning, missing
// parents are created (0700) and the content is written atomically (temporary file, fsync,
// rename, fsync of the directory; new files 0600). It returns the commit id ("" if none);
// ContentHash is then the hash of what it wrote.
func (tx *Tx) WriteFile(w Write) (string, error) {
	t, z := tx.targets[0], tx.e.Steps[0].Zone
	old, files := int64(0), int64(1)
	if t.Exists {
		old, files = t.Size, 0
	}
	if err := tx.reserve(z, w.Size, Amount{Bytes: w.Size - old, Files: files}); err != nil {
		return "", err
	}
	return tx.Apply(func() (Change, error) {
		if err := tx.r.mkdirAll(tx.ctx, z, path.Dir(t.Rel)); err != nil {
			return Change{}, WriteError(err, z, t.Shown)
		}
		sum := NewContentHash()
		body := io.TeeReader(w.Body, sum)
		if t.Exists {
			body = &unchangedAtEnd{r: body, z: z, t: t}
		}
		n, err := z.fs.WriteAtomic(t.Rel, body, 0o600)
		if err != nil {
			return Change{}, WriteError(err, z, t.Shown)
		}
		tx.written = sum.Sum()
		ch := changeOf(t)
		ch.Growth = Amount{Bytes: n - old, Files: files}
		return ch, nil
	})
}

// changeOf is the versioning change of a write: the path itself, or a full detection when
// the path is a symlink (the content went to its target, whose name we do not know here).
func changeOf(t Target) Change {
	if t.Symlink {
		return Change{All: true}
	}
	return Change{Paths: []string{t.Rel}}
}

// OpenOld opens the existing file of t, to stream it into its new version.
func OpenOld(z *Zone, t Target) (afero.File, error) {
	f, err := z.fs.Open(t.Rel)
	if err != nil {
		return nil, WriteError(err, z, t.Shown)
	}
	return f, nil
}

package core

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/fileshed/fileshed/core/confine"
)

// The copy core shared by the zone bridges (and meant for every cross-zone move or copy,
// such as shed_copy_to_group): a source tree is first scanned (scanTree: sizes for the
// quota, links and special files refused), then carried (carry): moved in one rename, or
// copied into a staging name beside the destination (stageCopy) and renamed into place in
// one step, so a failure or a crash never leaves a half-copied destination; a leftover
// staging file or folder carries a temporary name that the start-up sweep removes.

// TreeInfo is what a scan found: the regular files (zone-relative) and their total size;
// names counts every name of the tree (its root included), copied the names a copy writes
// (stageCopy: the root, the files and the folders that lead to them).
type TreeInfo struct {
	Dir           bool
	Files         []string
	sizes         []int64
	Size          int64
	Names, Copied int64
}

// ScanTree walks rel (described by fi, not followed) in z and refuses what a bridge must
// never carry: a symlink (PATH_ESCAPE when it points outside the zone, INVALID_PATH
// otherwise: a link moved or copied to another zone would point elsewhere), a FIFO, a
// device or a socket (NOT_A_FILE: opening a FIFO would hang), and names no tool could
// have written (INVALID_PATH). Temporary files of writes in flight are left out.
func ScanTree(z *Zone, rel string, fi fs.FileInfo) (TreeInfo, error) {
	var t TreeInfo
	t.Dir = fi.IsDir()
	var walk func(rel string, fi fs.FileInfo) error
	walk = func(rel string, fi fs.FileInfo) error {
		if !confine.IsTempName(rel) {
			t.Names++
		}
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			if _, err := z.fs.Confined(rel); err != nil {
				return Errf(PathEscape, "%s is a symbolic link pointing outside the %s zone", rel, z.Label).
					With("path", rel).With("zone", z.Label).Because(err).
					WithHint("Bridges never follow links out of a zone: copy the files themselves, or remove the link with shed_delete")
			}
			return Errf(InvalidPath, "%s is a symbolic link: bridges carry files and folders, not links", rel).
				With("path", rel).With("zone", z.Label).
				WithHint("Bridge the link's target instead, or remove the link with shed_delete and retry")
		case m.IsRegular() && confine.IsTempName(rel):
			return nil // a write in flight (or its crash leftover): never copied
		case m.IsRegular():
			t.Files = append(t.Files, rel)
			t.sizes = append(t.sizes, fi.Size())
			t.Size += fi.Size()
			return nil
		case !m.IsDir():
			return Errf(NotAFile, "%s is not a regular file (a %s)", rel, FileKind(m)).With("path", rel).With("zone", z.Label).
				WithHint("Only regular files and folders can be moved or copied: remove it with shed_delete")
		}
		d, err := z.fs.Open(rel)
		if err != nil {
			return WriteError(err, z, rel)
		}
		entries, err := d.Readdir(-1)
		_ = d.Close()
		if err != nil {
			return WriteError(err, z, rel)
		}
		for _, e := range entries {
			if c, err := confine.Clean(e.Name()); err != nil || c != e.Name() {
				return Errf(InvalidPath, "%s holds a name that cannot be carried: %q", rel, Shorten(e.Name())).
					With("path", rel).With("zone", z.Label).
					WithHint("Rename or delete that entry with shed_exec (mv/rm), then retry")
			}
			if err := walk(path.Join(rel, e.Name()), e); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(rel, fi); err != nil {
		return t, err
	}
	t.Copied = int64(len(t.Files))
	if t.Dir {
		t.Copied++ // the root
		folders := map[string]bool{}
		for _, f := range t.Files {
			for d := path.Dir(f); d != rel && d != "." && !folders[d]; d = path.Dir(d) {
				folders[d] = true
			}
		}
		t.Copied += int64(len(folders))
	}
	return t, nil
}

// Recodes reports whether moving from src to dst is a copy then a removal: between an
// encrypted zone and a plain one, the files are decrypted or encrypted on the way.
func Recodes(move bool, src, dst *Zone) bool { return move && !confine.SameSeal(src.fs, dst.fs) }

// Carry puts the scanned tree t at srcRel of src to destRel of dst (shown: dest as the
// model gave it): moved in one rename, or copied into a staging name and renamed into
// place. Missing destination folders are created. Without replace an existing destination
// is FILE_EXISTS (checked by the kernel); with it, a file is replaced atomically. It returns
// the bytes written (0 for a move). The caller holds the path locks and, for versioned
// zones, runs it inside mutate.
func Carry(ctx context.Context, src *Zone, srcRel string, t TreeInfo, dst *Zone, destRel, shown string, move, replace bool) (int64, error) {
	dir := path.Dir(destRel)
	if dir == "." {
		dir = ""
	}
	if err := dst.fs.MkdirAll(dir, 0o700); err != nil {
		return 0, WriteError(err, dst, shown)
	}
	from, fromRel, written := src, srcRel, int64(0)
	// Between an encrypted zone and a plain one a move is a copy (decrypting or
	// encrypting), then the source's removal.
	recode := Recodes(move, src, dst)
	if !move || recode {
		name, release := confine.HoldTemp()
		defer release()
		stage := path.Join(dir, name)
		n, err := stageCopy(ctx, src, srcRel, t, dst, stage)
		if err != nil {
			return 0, err
		}
		from, fromRel, written = dst, stage, n
	}
	if err := from.fs.MoveTo(fromRel, dst.fs, destRel, !replace); err != nil {
		if !move {
			_ = dst.fs.RemoveAll(fromRel)
		}
		if errors.Is(err, fs.ErrExist) {
			return 0, DestExists(dst, shown, t.Dir, false)
		}
		return 0, WriteError(err, dst, shown)
	}
	if recode {
		if err := src.fs.RemoveAll(srcRel); err != nil {
			return 0, WriteError(err, src, srcRel)
		}
		written = 0
	}
	return written, nil
}

// stageCopy copies the scanned tree t rooted at srcRel in src into dst at stage, a fresh
// temporary name in the destination's folder (TempName); the caller renames stage into
// place. Each file is opened without blocking (a FIFO swapped in after the scan cannot
// hang the server) and read up to its scanned size, so the bytes written are exactly what
// was reserved. On error the staging copy is removed. It returns the bytes written.
func stageCopy(ctx context.Context, src *Zone, srcRel string, t TreeInfo, dst *Zone, stage string) (int64, error) {
	var written int64
	err := func() error {
		if t.Dir {
			if err := dst.fs.Mkdir(stage, 0o700); err != nil {
				return WriteError(err, dst, stage)
			}
		}
		for i, f := range t.Files {
			if err := ctx.Err(); err != nil {
				return Errf(InternalError, "The copy was interrupted").Because(err)
			}
			target := stage
			if t.Dir {
				target = path.Join(stage, f[len(srcRel)+1:])
				if err := dst.fs.MkdirAll(path.Dir(target), 0o700); err != nil {
					return WriteError(err, dst, f)
				}
			}
			n, err := stageFile(src, f, t.sizes[i], dst, target)
			written += n
			if err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		_ = dst.fs.RemoveAll(stage)
		return 0, err
	}
	return written, nil
}

// stageFile streams at most size bytes of the regular file rel of src into target of dst
// through the atomic write path.
func stageFile(src *Zone, rel string, size int64, dst *Zone, target string) (int64, error) {
	f, err := src.fs.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, WriteError(err, src, rel)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, Errf(NotAFile, "%s is no longer a regular file", rel).With("path", rel).With("zone", src.Label).
			WithHint("Something changed the file during the copy: check it with shed_tree and retry")
	}
	n, err := dst.fs.WriteAtomic(target, io.LimitReader(f, size), 0o600)
	if err != nil {
		return 0, WriteError(err, dst, rel)
	}
	return n, nil
}

// DestExists is FILE_EXISTS for a bridge's destination.
func DestExists(dst *Zone, dest string, folder, overwrite bool) *Error {
	e := Errf(FileExists, "Destination exists: %s", dest).With("path", dest).With("zone", dst.Label).
		WithHint("Use overwrite=true to replace the existing file, or choose another dest")
	if folder || overwrite {
		e.WithHint("overwrite=true replaces a file by a file, never a folder: choose another dest or shed_delete it first")
	}
	return e
}

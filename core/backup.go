package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/valves"
)

// Backup and restore of a whole storage directory (`fileshed admin backup|restore`).
//
// A backup is taken while the server serves and writes: the state database through SQLite's
// VACUUM INTO (one consistent snapshot), then every zone file as it is at the moment it is
// copied (writes are atomic renames, so each file is one whole version), and each git
// directory refs first, objects after: objects are only ever added, so every commit a copied
// ref names is in the copy. Usage figures may lag the files by the writes made during the
// copy: restore reconciles every owner with the restored disk.

// stateFiles are the top-level files that are not copied as they are (the database is
// snapshotted; its WAL, shared memory and the storage lock belong to the live process).
var stateFiles = map[string]bool{"fileshed.sqlite": true, "fileshed.sqlite-wal": true,
	"fileshed.sqlite-shm": true, storageLockName: true}

// AdminBackup writes a backup of the storage directory into dst, which must not exist or
// be empty.
func (s *Service) AdminBackup(ctx context.Context, dst string) error {
	if err := emptyDir(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	if err := s.db.BackupTo(ctx, filepath.Join(dst, "fileshed.sqlite")); err != nil {
		return err
	}
	return copyStorage(ctx, s.base, dst)
}

// Restore copies the backup src into the storage directory of cfg, then reconciles every
// owner's usage with the restored files. It refuses while a server runs on that storage,
// and refuses a storage that holds data unless force (which replaces it).
func Restore(ctx context.Context, cfg *valves.Config, src string, force bool) error {
	if _, err := os.Stat(filepath.Join(src, "fileshed.sqlite")); err != nil {
		return fmt.Errorf("%s is not a fileshed backup (no fileshed.sqlite)", src)
	}
	base, err := filepath.Abs(cfg.StorageBasePath)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	l, err := lockStorage(base, holderOperator)
	if err != nil {
		return err
	}
	defer l.Close()
	if !force && hasData(base) {
		return fmt.Errorf("%s already holds data: restore with --force to replace it", base)
	}
	for _, name := range []string{"users", "groups", "fileshed.sqlite", "fileshed.sqlite-wal", "fileshed.sqlite-shm"} {
		if err := os.RemoveAll(filepath.Join(base, name)); err != nil {
			return err
		}
	}
	if err := copyFile(filepath.Join(src, "fileshed.sqlite"), filepath.Join(base, "fileshed.sqlite")); err != nil {
		return err
	}
	if err := copyStorage(ctx, src, base); err != nil {
		return err
	}
	l.Close() // the service below takes no storage lock (Admin), the reconcile does
	svc, err := New(cfg, Options{Admin: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	_, err = svc.AdminReconcile(ctx, "")
	return err
}

// hasData reports whether a storage directory holds zones or a state database.
func hasData(base string) bool {
	for _, d := range []string{"users", "groups"} {
		if entries, _ := os.ReadDir(filepath.Join(base, d)); len(entries) > 0 {
			return true
		}
	}
	_, err := os.Stat(filepath.Join(base, "fileshed.sqlite"))
	return err == nil
}

// emptyDir accepts a path that does not exist or is an empty directory.
func emptyDir(p string) error {
	entries, err := os.ReadDir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty", p)
	}
	return nil
}

// copyStorage copies everything of a storage directory but the state files: zones with
// their files and links (never followed), git directories refs before objects.
func copyStorage(ctx context.Context, src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if stateFiles[e.Name()] {
			continue
		}
		if err := copyTree(ctx, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies src to dst: directories (0700), regular files (their mode), symlinks as
// links; FIFOs, sockets and devices, temporary files of writes in flight and lock files are
// skipped. A git directory (repo.git) is copied refs first, objects second, the rest last.
func copyTree(ctx context.Context, src, dst string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed or renamed away since its folder was listed (a write in flight)
	}
	if err != nil {
		return err
	}
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case m.IsRegular():
		if confine.IsTempName(src) || strings.HasSuffix(src, ".lock") {
			return nil
		}
		if err := copyFile(src, dst); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	case !m.IsDir():
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if filepath.Base(src) == "repo.git" {
		entries = refsFirst(entries)
	}
	for _, e := range entries {
		if err := copyTree(ctx, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// refsFirst orders a git directory's entries: HEAD, packed-refs and refs, then objects,
// then the rest.
func refsFirst(entries []fs.DirEntry) []fs.DirEntry {
	rank := func(name string) int {
		switch name {
		case "HEAD", "packed-refs", "refs":
			return 0
		case "objects":
			return 1
		}
		return 2
	}
	out := make([]fs.DirEntry, 0, len(entries))
	for r := 0; r <= 2; r++ {
		for _, e := range entries {
			if rank(e.Name()) == r {
				out = append(out, e)
			}
		}
	}
	return out
}

// copyFile copies a regular file (never through a link) with its permission bits.
func copyFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

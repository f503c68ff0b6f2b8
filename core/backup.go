package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

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
// copy: restore reconciles every owner with the restored disk. The trees are walked relative
// to open folders (walk.go), so a user's tree deeper than PATH_MAX is copied like any other;
// what cannot be read is listed in the manifest, written last, without which restore
// refuses the directory.

// stateFiles are the top-level files that are not copied as they are (the database is
// snapshotted; its WAL, shared memory and the storage lock belong to the live process; a
// backup's manifest describes that backup only).
var stateFiles = map[string]bool{stateFileName: true, stateFileName + "-wal": true,
	stateFileName + "-shm": true, storageLockName: true, backupManifest: true}

// backupManifest is the file a backup writes last: a directory without it is not a finished
// backup (interrupted, or still being written), and restore refuses it.
const backupManifest = "fileshed-backup.json"

// BackupReport is what a finished backup says about itself (its manifest).
type BackupReport struct {
	Finished time.Time `json:"finished"`
	// Skipped are the names the copy could not read ("path: cause", storage-relative,
	// shortened, at most 20) and SkippedCount how many there were: everything else is in
	// the backup.
	Skipped      []string `json:"skipped"`
	SkippedCount int      `json:"skipped_count"`
}

// AdminBackup writes a backup of the storage directory into dst, which must not exist or
// be empty. A name the copy cannot read is listed in the report and the copy goes on; the
// manifest, written last, marks the backup finished.
func (s *Service) AdminBackup(ctx context.Context, dst string) (BackupReport, error) {
	if err := emptyDir(dst); err != nil {
		return BackupReport{}, err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return BackupReport{}, err
	}
	if err := s.db.BackupTo(ctx, LayoutOf(dst).StateFile()); err != nil {
		return BackupReport{}, err
	}
	skipped, err := copyStorage(ctx, s.base, dst)
	if err != nil {
		return BackupReport{}, err
	}
	rep := BackupReport{Finished: time.Now().UTC(), Skipped: skipped.first, SkippedCount: skipped.count}
	if rep.Skipped == nil {
		rep.Skipped = []string{}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return rep, err
	}
	root, err := confine.New(dst)
	if err != nil {
		return rep, err
	}
	defer root.Close()
	_, err = root.WriteAtomic(backupManifest, bytes.NewReader(append(b, '\n')), 0o600)
	return rep, err
}

// readManifest reads the manifest of the backup src.
func readManifest(src string) (BackupReport, error) {
	var rep BackupReport
	b, err := os.ReadFile(LayoutOf(src).Top(backupManifest))
	if errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("%s is not a finished backup (no %s: the backup was interrupted or is still being written)", src, backupManifest)
	}
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, fmt.Errorf("%s: %s is damaged: %w", src, backupManifest, err)
	}
	return rep, nil
}

// Restore copies the finished backup src into the storage directory of cfg, then
// reconciles every owner's usage with the restored files, and returns the backup's manifest
// (what the backup itself could not copy). It refuses while a server runs on that storage,
// and refuses a storage that holds data unless force (which replaces it).
func Restore(ctx context.Context, cfg *valves.Config, src string, force bool) (BackupReport, error) {
	if _, err := os.Stat(LayoutOf(src).StateFile()); err != nil {
		return BackupReport{}, fmt.Errorf("%s is not a fileshed backup (no fileshed.sqlite)", src)
	}
	rep, err := readManifest(src)
	if err != nil {
		return rep, err
	}
	base, err := filepath.Abs(cfg.StorageBasePath)
	if err != nil {
		return rep, err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return rep, err
	}
	l, err := lockStorage(base, holderOperator)
	if err != nil {
		return rep, err
	}
	defer l.Close()
	if !force && hasData(base) {
		return rep, fmt.Errorf("%s already holds data: restore with --force to replace it", base)
	}
	sl := LayoutOf(base)
	for _, p := range append([]string{sl.Owners("user"), sl.Owners("group")}, sl.StateFiles()...) {
		if err := os.RemoveAll(p); err != nil {
			return rep, err
		}
	}
	if err := copyState(src, base); err != nil {
		return rep, err
	}
	skipped, err := copyStorage(ctx, src, base)
	if err != nil {
		return rep, err
	}
	if skipped.count > 0 {
		return rep, fmt.Errorf("restore incomplete: %d name(s) of the backup could not be read: %s", skipped.count, strings.Join(skipped.first, "; "))
	}
	l.Close() // the service below takes no storage lock (Admin), the reconcile does
	svc, err := New(cfg, Options{Admin: true})
	if err != nil {
		return rep, err
	}
	defer svc.Close()
	_, err = svc.AdminReconcile(ctx, "")
	return rep, err
}

// copyState copies the backup's state database into the storage directory base.
func copyState(src, base string) error {
	from, err := unix.Open(src, walkDirFlags, 0)
	if err != nil {
		return err
	}
	defer unix.Close(from)
	to, err := unix.Open(base, walkDirFlags, 0)
	if err != nil {
		return err
	}
	defer unix.Close(to)
	return copyFileAt(from, to, stateFileName)
}

// hasData reports whether a storage directory holds zones or a state database.
func hasData(base string) bool {
	for _, d := range []string{"user", "group"} {
		if entries, _ := os.ReadDir(LayoutOf(base).Owners(d)); len(entries) > 0 {
			return true
		}
	}
	_, err := os.Stat(LayoutOf(base).StateFile())
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
// their files and links (never followed), git directories refs before objects; FIFOs,
// sockets and devices, temporary files of writes in flight and lock files are skipped. It
// walks both trees relative to open folders (walk.go), so a tree deeper than PATH_MAX is
// copied whole. A name it cannot read is listed and the copy goes on; a failure to write
// the copy ends it.
func copyStorage(ctx context.Context, src, dst string) (walkProblems, error) {
	var skipped walkProblems
	cur, err := unix.Open(dst, walkDirFlags, 0) // the copy's folder matching the walk's
	if err != nil {
		return skipped, err
	}
	defer func() { unix.Close(cur) }()
	move := func(name string) error {
		fd, err := unix.Openat(cur, name, walkDirFlags, 0)
		if err != nil {
			return &fs.PathError{Op: "open", Path: name, Err: err}
		}
		unix.Close(cur)
		cur = fd
		return nil
	}
	w := treeWalk{
		order: func(rel string, ents []walkEnt) []walkEnt {
			if path.Base(rel) == repoName {
				return refsFirst(ents)
			}
			return ents
		},
		visit: func(dirfd int, rel string, e walkEnt) (bool, error) {
			if rel == e.name && stateFiles[e.name] {
				return false, nil
			}
			var err error
			switch {
			case e.typ&fs.ModeDir != 0:
				if err := unix.Mkdirat(cur, e.name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
					return false, &fs.PathError{Op: "mkdir", Path: rel, Err: err}
				}
				return true, nil
			case e.typ&fs.ModeSymlink != 0:
				var target string
				if target, err = readlinkAt(dirfd, e.name); err == nil {
					if werr := unix.Symlinkat(target, cur, e.name); werr != nil {
						return false, &fs.PathError{Op: "symlink", Path: rel, Err: werr}
					}
				}
			case e.typ.IsRegular() && !confine.IsTempName(e.name) && !strings.HasSuffix(e.name, ".lock"):
				err = copyFileAt(dirfd, cur, e.name)
				var we *copyWriteError
				if errors.As(err, &we) {
					return false, &fs.PathError{Op: "write", Path: rel, Err: we.err}
				}
			}
			if err != nil && !errors.Is(err, unix.ENOENT) { // ENOENT: removed since listed
				skipped.add(rel, err)
			}
			return false, nil
		},
		enter:   func(rel string) error { return move(path.Base(rel)) },
		leave:   func(string) error { return move("..") },
		problem: skipped.add,
	}
	return skipped, w.run(ctx, src)
}

// copyWriteError is a failure to write the copy (as opposed to reading the original).
type copyWriteError struct{ err error }

func (e *copyWriteError) Error() string { return e.err.Error() }

// readlinkAt reads the target of the link name in the folder open as dirfd.
func readlinkAt(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// copyFileAt copies the regular file name (never through a link) from the folder open as
// from into the folder open as to, with its permission bits (at most 0700). A failure to
// write is a *copyWriteError; the partial copy is removed.
func copyFileAt(from, to int, name string) error {
	in, err := unix.Openat(from, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	src := os.NewFile(uintptr(in), name)
	defer src.Close()
	fi, err := src.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return err // replaced by something else since listed: not copied
	}
	out, err := unix.Openat(to, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(fi.Mode().Perm()&0o700))
	if err != nil {
		return &copyWriteError{err}
	}
	dst := os.NewFile(uintptr(out), name)
	r := &readErr{r: src}
	_, err = io.Copy(dst, r)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(to, name, 0)
		if r.err != nil {
			return r.err
		}
		return &copyWriteError{err}
	}
	return nil
}

// readErr remembers the error of its reader (io.Copy does not say which side failed).
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// refsFirst orders a git directory's entries: HEAD, packed-refs and refs, then objects,
// then the rest.
func refsFirst(entries []walkEnt) []walkEnt {
	rank := func(name string) int {
		switch name {
		case "HEAD", "packed-refs", "refs":
			return 0
		case "objects":
			return 1
		}
		return 2
	}
	out := make([]walkEnt, 0, len(entries))
	for r := 0; r <= 2; r++ {
		for _, e := range entries {
			if rank(e.name) == r {
				out = append(out, e)
			}
		}
	}
	return out
}

package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
)

// `fileshed admin import-original DIR` copies a storage directory of the original Fileshed
// tool (Python, inside Open WebUI; reference §2.1) into fileshed's storage:
//
//	users/{id}/Uploads/{chat}/...          -> users/{id}/Uploads/{chat}/...   (chat id made a safe name)
//	users/{id}/Storage/data/...            -> users/{id}/Storage/data/...
//	users/{id}/Documents/data/... (+.git)  -> users/{id}/Documents/data/... + Documents/repo.git
//	groups/{id}/data/... (+.git)           -> groups/{id}/data/... + groups/{id}/repo.git
//	access_auth.sqlite file_ownership      -> the ownership records of the state database
//
// The original is only read, through an os.Root: nothing is written there, and no symlink
// is followed out of it. All or nothing: everything is built in a staging directory inside
// the storage (a complete storage directory of its own: zones, repositories, state
// database with ownership and usage), then moved into place by a few renames. An
// interrupted import leaves the storage as it was (the staging directory is removed by the
// next run), or, interrupted during those renames, a storage the next run replaces with
// --force.

// stagingName is the staging directory inside the storage; no other fileshed code reads it.
const stagingName = ".import-original"

// importer is one run of import-original.
type importer struct {
	cfg     *valves.Config
	src     *os.Root // the original storage directory; every read goes through it
	staging string   // host path of the staging storage directory
	rep     *report
}

// importOriginal runs `fileshed admin import-original src [--force]` into the storage of cfg
// and prints what it did per user and group.
func importOriginal(ctx context.Context, cfg *valves.Config, src string, force bool, out io.Writer) error {
	srcAbs, err := realDir(src)
	if err != nil {
		return fmt.Errorf("original storage: %w", err)
	}
	if err := looksOriginal(srcAbs); err != nil {
		return err
	}
	// Why before anything is created: a storage inside the original would be written into
	// the original (and copied into itself), an original inside the storage would be read
	// while being replaced. The path is resolved through its existing part, so a link on the
	// way cannot hide where the storage directory would be made.
	base, err := resolvePath(cfg.StorageBasePath)
	if err != nil {
		return err
	}
	if within(base, srcAbs) || within(srcAbs, base) {
		return fmt.Errorf("the storage directory %s and the original %s must not contain one another", base, srcAbs)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	lock, err := core.LockForOperator(base)
	if err != nil {
		return err
	}
	defer lock.Close()
	if !force && core.HoldsData(base) {
		return fmt.Errorf("%s already holds data: import with --force to replace it (its zones and state database)", base)
	}
	root, err := os.OpenRoot(srcAbs)
	if err != nil {
		return err
	}
	defer root.Close()
	im := &importer{cfg: cfg, src: root, staging: filepath.Join(base, stagingName), rep: &report{}}
	if err := os.RemoveAll(im.staging); err != nil { // an interrupted run's leftover
		return err
	}
	defer os.RemoveAll(im.staging) // after a failure; empty after success
	if err := im.build(ctx); err != nil {
		return fmt.Errorf("nothing was changed in %s: %w", base, err)
	}
	if err := im.install(base, force); err != nil {
		return fmt.Errorf("moving the import into %s: %w (run again with --force)", base, err)
	}
	im.rep.print(out, srcAbs, base)
	return nil
}

// build fills the staging directory: every user, every group, their ownership records,
// then every owner's usage measured on the staged files.
func (im *importer) build(ctx context.Context) error {
	for _, d := range []string{"users", "groups"} {
		if err := os.MkdirAll(filepath.Join(im.staging, d), 0o700); err != nil {
			return err
		}
	}
	top, err := im.readDir(".")
	if err != nil {
		return err
	}
	for _, e := range top {
		switch name := e.Name(); {
		case name == "users" || name == "groups":
			if !e.IsDir() {
				im.rep.note("%s is not a folder (a symlink is never followed): not imported", name)
				continue
			}
			if err := im.owners(ctx, name); err != nil {
				return err
			}
		case name == ownershipDB || strings.HasPrefix(name, ownershipDB+"-"):
		default:
			im.rep.note("%s: not part of the original's layout: not imported", name)
		}
	}
	if err := im.ownership(ctx); err != nil {
		return err
	}
	return im.usage(ctx)
}

// owners imports every user (dir "users") or group (dir "groups") of the original.
func (im *importer) owners(ctx context.Context, dir string) error {
	kind := strings.TrimSuffix(dir, "s")
	entries, err := im.readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := path.Join(dir, e.Name())
		switch {
		case !core.ValidID(e.Name()):
			im.rep.note("%s: %q is not a valid %s id (letters, digits, '-', '_'): not imported", rel, e.Name(), kind)
		case !e.IsDir():
			im.rep.note("%s: not a folder (a symlink is never followed): not imported", rel)
		default:
			o := im.rep.owner(kind, e.Name())
			if kind == "user" {
				err = im.user(o, rel)
			} else {
				err = im.space(o, "group", rel, filepath.Join(im.staging, filepath.FromSlash(rel)), true)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
	}
	return nil
}

// usage measures every imported owner on the staged files with core's own measure (the
// one shed_maintenance and quota reconcile use) and records it in the staged database.
func (im *importer) usage(ctx context.Context) error {
	cfg := *im.cfg
	cfg.StorageBasePath = im.staging
	svc, err := core.New(&cfg, core.Options{Admin: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	for _, o := range im.rep.owners {
		used, unmeasured, err := svc.Reconcile(ctx, o.store())
		if err != nil {
			return fmt.Errorf("%s %s: usage: %w", o.kind, o.id, err)
		}
		if len(unmeasured) > 0 {
			return fmt.Errorf("%s %s: usage: cannot measure %s", o.kind, o.id, strings.Join(unmeasured, ", "))
		}
		o.used = used.Bytes
		o.limit = int64(im.cfg.QuotaPerUserMB) << 20
		if o.kind == "group" {
			o.limit = int64(im.cfg.QuotaPerGroupMB) << 20
		}
	}
	return nil
}

// install moves the staged storage into base: the state database first, then the zones.
// With force, base's zones and state database are removed first (as restore --force).
// Why one syncfs first instead of an fsync per file: the renames must publish only what is
// on the disk, and one flush of the file system costs a fraction of thousands of fsyncs.
func (im *importer) install(base string, force bool) error {
	staged, err := os.Open(im.staging)
	if err != nil {
		return err
	}
	err = unix.Syncfs(int(staged.Fd()))
	staged.Close()
	if err != nil {
		return err
	}
	for _, name := range []string{"users", "groups", "fileshed.sqlite", "fileshed.sqlite-wal", "fileshed.sqlite-shm"} {
		p := filepath.Join(base, name)
		if force {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		} else if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err // only the empty users/ and groups/ of a fresh storage are removed
		}
	}
	for _, name := range []string{"fileshed.sqlite-wal", "fileshed.sqlite-shm", "fileshed.sqlite", "groups", "users"} {
		from := filepath.Join(im.staging, name)
		if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(from, filepath.Join(base, name)); err != nil {
			return err
		}
	}
	d, err := os.Open(base)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readDir lists a folder of the original (relative to its root), sorted by name so that
// the import and its report do not depend on the order the file system lists.
func (im *importer) readDir(rel string) ([]fs.DirEntry, error) {
	f, err := im.src.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// realDir resolves p to an absolute path without symlinks and checks it is a directory.
func realDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil {
		return "", err
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// resolvePath makes p absolute and resolves the symlinks of the part of it that exists.
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for dir := abs; ; dir = filepath.Dir(dir) {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
			return "", err
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
	}
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// looksOriginal refuses a directory that is not an original Fileshed storage directory.
func looksOriginal(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "fileshed.sqlite")); err == nil {
		return fmt.Errorf("%s is a fileshed storage directory, not the original's (use fileshed admin backup and restore)", dir)
	}
	for _, name := range []string{"users", "groups", ownershipDB} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s is not an original Fileshed storage directory (no users/, groups/ or %s)", dir, ownershipDB)
}

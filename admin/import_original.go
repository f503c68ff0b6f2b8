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
// database with ownership, members, usage and the audit entry), then swapped into place
// name by name (import_install.go). An import interrupted before the swap leaves the
// storage as it was (the staging directory is removed by the next run); one interrupted
// during the swap leaves a marker that refuses the storage until --finish or --rollback.

// importer is one run of import-original.
type importer struct {
	cfg     *valves.Config
	opt     importOptions
	src     *os.Root // the original storage directory; every read goes through it
	staging string   // host path of the staging storage directory
	rep     *report
	damaged []string // the repositories whose history cannot be imported, and why
}

// importOptions are the flags of import-original.
type importOptions struct {
	force        bool // replace a storage that holds data
	finish       bool // complete an interrupted swap
	rollback     bool // undo an interrupted swap
	noOwnership  bool // import without access_auth.sqlite: every group file writable by every member
	allowDamaged bool // import a repository whose history is damaged as one new version
}

// importOriginal runs `fileshed admin import-original src` into the storage of cfg and
// prints what it did per user and group; with finish or rollback it ends an interrupted
// swap instead.
func importOriginal(ctx context.Context, cfg *valves.Config, src string, opt importOptions, out io.Writer) error {
	if opt.finish || opt.rollback {
		return endInterrupted(cfg, opt, out)
	}
	if src == "" {
		return errors.New("the original storage directory is missing (import-original DIR)")
	}
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
	made, err := makeBase(base)
	if err != nil {
		return err
	}
	im := &importer{cfg: cfg, opt: opt, staging: core.LayoutOf(base).ImportStaging(), rep: &report{}}
	lock, err := core.LockForOperator(base)
	if err != nil {
		made.undo()
		return err
	}
	swapped := false
	defer func() {
		if !swapped {
			made.undo() // a refused or failed import leaves no folder or lock file it made
		}
		lock.Close()
	}()
	if err := core.ImportInterrupted(base); err != nil {
		return err // its staging directory is the way back: never removed here
	}
	if !opt.force && core.HoldsData(base) {
		return fmt.Errorf("%s already holds data: import with --force to replace it (its zones and state database)", base)
	}
	root, err := os.OpenRoot(srcAbs)
	if err != nil {
		return err
	}
	defer root.Close()
	im.src = root
	if err := os.RemoveAll(im.staging); err != nil { // an interrupted build's leftover, or a finished swap's
		return err
	}
	defer os.RemoveAll(im.staging) // after a failure; gone after success
	if err := im.build(ctx); err != nil {
		return fmt.Errorf("nothing was changed in %s: %w", base, err)
	}
	swapped = true
	if err := im.install(base); err != nil {
		cmd := "fileshed admin --storage-base-path " + base + " import-original"
		return fmt.Errorf("moving the import into %s: %w (run `%s --finish` to complete it, or `%s --rollback`)", base, err, cmd, cmd)
	}
	im.rep.print(out, srcAbs, base)
	return nil
}

// build fills the staging directory: every user, every group, their ownership records,
// then every owner's usage measured on the staged files.
func (im *importer) build(ctx context.Context) error {
	for _, kind := range []string{"user", "group"} {
		if err := os.MkdirAll(core.LayoutOf(im.staging).Owners(kind), 0o700); err != nil {
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
	if len(im.damaged) > 0 && !im.opt.allowDamaged {
		return fmt.Errorf("%d repositor(ies) of the original cannot be imported with their history: %s; "+
			"import with --allow-damaged-history to import their files as one new version each (their history is lost)",
			len(im.damaged), printable(strings.Join(im.damaged, "; ")))
	}
	if err := im.ownership(ctx); err != nil {
		return err
	}
	if err := im.usage(ctx); err != nil {
		return err
	}
	return im.audit(ctx)
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
				err = im.space(o, "group", rel, core.LayoutOf(im.staging).GroupSpace(e.Name()), true)
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
	if _, err := os.Stat(core.LayoutOf(dir).StateFile()); err == nil {
		return fmt.Errorf("%s is a fileshed storage directory, not the original's (use fileshed admin backup and restore)", dir)
	}
	for _, name := range []string{"users", "groups", ownershipDB} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s is not an original Fileshed storage directory (no users/, groups/ or %s)", dir, ownershipDB)
}

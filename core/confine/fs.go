package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/crypt"
)

// Fs is an afero.Fs confined to one directory (a zone) through os.Root: the
// kernel resolves every name relative to the directory's descriptor, so no
// "..", symlink or rename race can reach outside. Every method cleans the name
// with Clean first. Names are zone-relative; "" (or ".") is the zone root.
// Fs is safe for concurrent use.
type Fs struct {
	root *os.Root
	dir  string
	// key, when set, opens what is sealed and, unless writePlain, seals what is written
	// (sealed.go).
	key          *crypt.Key
	writePlain   bool
	refuseSealed bool // no key, and an encrypted file is refused rather than read raw
}

var (
	_ afero.Fs        = (*Fs)(nil)
	_ afero.Symlinker = (*Fs)(nil)
)

// New opens the zone directory dir, creating it (and its parents) with mode
// 0700 if missing. Errors never contain dir.
func New(dir string) (*Fs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("confine: zone directory: %w", bare(err))
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("confine: create zone directory: %w", bare(err))
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("confine: open zone directory: %w", bare(err))
	}
	return &Fs{root: root, dir: abs}, nil
}

// Close releases the zone directory. Later calls fail.
func (f *Fs) Close() error { return f.root.Close() }

// Dir returns the absolute host path of the zone. Use it ONLY as the working
// directory of a subprocess; never put it in a message.
func (f *Fs) Dir() string { return f.dir }

// Name names this file system type (afero.Fs); it is not a path.
func (f *Fs) Name() string { return "confine.Fs" }

// path cleans a name for op, wrapping refusals in a *PathError.
func (f *Fs) path(op, name string) (string, error) {
	c, err := clean(name)
	if err != nil {
		return "", &PathError{Op: op, Path: name, Err: err}
	}
	return c, nil
}

// rel turns a clean path into an os.Root name ("" is ".").
func rel(c string) string {
	if c == "" {
		return "."
	}
	return c
}

// ownerOnly keeps the owner bits of perm. Why: zones are private (new files
// 0600, new directories 0700); callers that pass 0644 or an archive entry's
// mode must not make files readable by other host users.
func ownerOnly(perm os.FileMode) os.FileMode { return perm.Perm() & 0o700 }

// notRoot refuses operations that would remove or move the zone itself.
func notRoot(op, name, c string) error {
	if c == "" {
		return &PathError{Op: op, Path: name, Err: fmt.Errorf("%w: the zone root itself", ErrInvalid)}
	}
	return nil
}

// Create creates or truncates name with mode 0600 and opens it read-write.
func (f *Fs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
}

// Open opens name for reading.
func (f *Fs) Open(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens name with flag; a created file gets the owner bits of perm.
// Symlinks are followed only while they stay inside the zone.
func (f *Fs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	c, err := f.path("open", name)
	if err != nil {
		return nil, err
	}
	of, err := f.root.OpenFile(rel(c), flag, ownerOnly(perm))
	if err != nil {
		return nil, fail("open", name, err)
	}
	af, err := f.openSealed(of, c, flag)
	if err != nil {
		of.Close()
		return nil, fail("open", name, err)
	}
	return af, nil
}

// Mkdir creates the directory name with the owner bits of perm.
func (f *Fs) Mkdir(name string, perm os.FileMode) error {
	c, err := f.path("mkdir", name)
	if err != nil {
		return err
	}
	return fail("mkdir", name, f.root.Mkdir(rel(c), ownerOnly(perm)))
}

// MkdirAll creates name and missing parents with the owner bits of perm.
func (f *Fs) MkdirAll(name string, perm os.FileMode) error {
	c, err := f.path("mkdir", name)
	if err != nil || c == "" {
		return err
	}
	return fail("mkdir", name, f.root.MkdirAll(c, ownerOnly(perm)))
}

// Remove removes the file or empty directory name; a symlink is removed
// itself, never its target. The zone root cannot be removed.
func (f *Fs) Remove(name string) error {
	c, err := f.path("remove", name)
	if err == nil {
		err = notRoot("remove", name, c)
	}
	if err != nil {
		return err
	}
	return fail("remove", name, f.root.Remove(c))
}

// RemoveAll removes name and everything below it; nil if it does not exist.
// Symlinks are removed, not followed. The zone root cannot be removed.
func (f *Fs) RemoveAll(name string) error {
	c, err := f.path("remove", name)
	if err == nil {
		err = notRoot("remove", name, c)
	}
	if err != nil {
		return err
	}
	return fail("remove", name, f.root.RemoveAll(c))
}

// Rename moves oldname to newname, both inside the zone.
func (f *Fs) Rename(oldname, newname string) error {
	o, err := f.path("rename", oldname)
	if err == nil {
		err = notRoot("rename", oldname, o)
	}
	if err != nil {
		return err
	}
	n, err := f.path("rename", newname)
	if err == nil {
		err = notRoot("rename", newname, n)
	}
	if err != nil {
		return err
	}
	if err := f.root.Rename(o, n); err != nil {
		// Name the side at fault: if the source is there, the destination is.
		if _, lerr := f.root.Lstat(o); lerr == nil {
			return fail("rename", newname, err)
		}
		return fail("rename", oldname, err)
	}
	return nil
}

// Stat describes name, following symlinks that stay inside the zone.
func (f *Fs) Stat(name string) (os.FileInfo, error) {
	c, err := f.path("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := f.root.Stat(rel(c))
	if err != nil {
		return nil, fail("stat", name, err)
	}
	return f.plainInfo(c, fi), nil
}

// Chmod sets the owner's permission bits of name; group and other bits, setuid,
// setgid and sticky are dropped. Why: the server may run with more privilege than
// the model deserves, a setuid file in a zone is never wanted, and zones are
// private (a mode a command chose in an encrypted zone's copy comes back here).
func (f *Fs) Chmod(name string, mode os.FileMode) error {
	c, err := f.path("chmod", name)
	if err != nil {
		return err
	}
	return fail("chmod", name, f.root.Chmod(rel(c), ownerOnly(mode)))
}

// Chown changes the owner and group of name.
func (f *Fs) Chown(name string, uid, gid int) error {
	c, err := f.path("chown", name)
	if err != nil {
		return err
	}
	return fail("chown", name, f.root.Chown(rel(c), uid, gid))
}

// Chtimes changes the access and modification times of name.
func (f *Fs) Chtimes(name string, atime, mtime time.Time) error {
	c, err := f.path("chtimes", name)
	if err != nil {
		return err
	}
	return fail("chtimes", name, f.root.Chtimes(rel(c), atime, mtime))
}

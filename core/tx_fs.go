package core

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
)

// The file system a transaction hands out (issue 35): a family writes a zone only through
// it, inside Apply, and it writes only what the transaction declared. Each write is checked
// where it lands, resolved through symlinks (confine.Fs.Resolve): a declared name that is a
// link to an undeclared file does not open that file to the write.

// ErrUndeclared is a write of a path the transaction did not declare: a family's mistake,
// answered as INTERNAL_ERROR (WriteError), never done.
var ErrUndeclared = errors.New("write outside the paths the transaction declared")

// TxFs is a zone's file system as one transaction may write it: reads go to the whole zone,
// writes only to a path a step of that zone declared, what lies below it (a folder removed,
// moved or filled), and the temporary names of the kernel (confine.HoldTemp: a staging
// folder, a file downloaded before its rename), which a rename brings only onto a declared
// place. It is an afero.Fs.
type TxFs struct {
	fs *confine.Fs
	tx *Tx
	z  *Zone
	// declared are the zone-relative places the steps reach: each path as named (its
	// parents resolved) and, for a write that follows a final link, where that link leads.
	declared []string
}

var _ afero.Fs = (*TxFs)(nil)

// Fs is z's file system for this transaction's writes (ErrUndeclared beyond what its steps
// of z declared). Use it inside Apply.
func (tx *Tx) Fs(z *Zone) *TxFs {
	t := &TxFs{fs: z.fs, tx: tx, z: z}
	for _, st := range tx.e.Steps {
		if st.Op == OpCopyFrom || st.Zone != z && st.Zone.fs.Dir() != z.fs.Dir() {
			continue
		}
		if p, err := t.place(st.Path, false); err == nil {
			t.declared = append(t.declared, p)
		}
		if p, err := t.place(st.Path, true); err == nil {
			t.declared = append(t.declared, p)
		}
	}
	return t
}

// place is where a write of name lands: resolved through every link, the final one too
// when follow, else the final name itself in its resolved parent.
func (t *TxFs) place(name string, follow bool) (string, error) {
	if follow {
		return t.fs.Resolve(name)
	}
	c, err := confine.Clean(name)
	if err != nil {
		return "", err
	}
	if c == "" || c == "." {
		return "", nil
	}
	dir, err := t.fs.Resolve(path.Dir(c))
	if err != nil {
		return "", err
	}
	return path.Join(dir, path.Base(c)), nil
}

// allow refuses a write of name (op names it in the error) unless it lands on a declared
// place, below one, or on a temporary name.
func (t *TxFs) allow(op, name string, follow bool) error {
	p, err := t.place(name, follow)
	if err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if t.declares(p) {
		return nil
	}
	// A temporary name and what is below it: the transaction's scratch (a staging folder, a
	// download before its rename), never shown to the model, swept if left behind; it
	// becomes content only by a rename onto a declared place.
	for part := range strings.SplitSeq(p, "/") {
		if confine.IsTempName(part) {
			return nil
		}
	}
	return &fs.PathError{Op: op, Path: name, Err: ErrUndeclared}
}

// declares tells whether p is a declared place or below one ("" is the zone root).
func (t *TxFs) declares(p string) bool {
	for _, d := range t.declared {
		if d == "" || p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// Name names this file system type (afero.Fs); it is not a path.
func (t *TxFs) Name() string { return "core.TxFs" }

// Open opens name for reading.
func (t *TxFs) Open(name string) (afero.File, error) { return t.fs.Open(name) }

// Stat describes name (links followed).
func (t *TxFs) Stat(name string) (os.FileInfo, error) { return t.fs.Stat(name) }

// LstatIfPossible describes name itself (a link is not followed).
func (t *TxFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	return t.fs.LstatIfPossible(name)
}

// Create creates or truncates the declared file name.
func (t *TxFs) Create(name string) (afero.File, error) {
	if err := t.allow("create", name, true); err != nil {
		return nil, err
	}
	return t.fs.Create(name)
}

// OpenFile opens name; with a flag that writes, name must be declared.
func (t *TxFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		if err := t.allow("open", name, true); err != nil {
			return nil, err
		}
	}
	return t.fs.OpenFile(name, flag, perm)
}

// Mkdir makes the declared folder name.
func (t *TxFs) Mkdir(name string, perm os.FileMode) error {
	if err := t.allow("mkdir", name, false); err != nil {
		return err
	}
	return t.fs.Mkdir(name, perm)
}

// MkdirAll makes the declared folder name and its missing parents.
func (t *TxFs) MkdirAll(name string, perm os.FileMode) error {
	if err := t.allow("mkdir", name, false); err != nil {
		return err
	}
	return t.fs.MkdirAll(name, perm)
}

// Remove removes the declared entry name (a link itself).
func (t *TxFs) Remove(name string) error {
	if err := t.allow("remove", name, false); err != nil {
		return err
	}
	return t.fs.Remove(name)
}

// RemoveAll removes the declared entry name and everything below it.
func (t *TxFs) RemoveAll(name string) error {
	if err := t.allow("remove", name, false); err != nil {
		return err
	}
	return t.fs.RemoveAll(name)
}

// Rename moves oldname to newname, both declared.
func (t *TxFs) Rename(oldname, newname string) error {
	if err := t.allow("rename", oldname, false); err != nil {
		return err
	}
	if err := t.allow("rename", newname, false); err != nil {
		return err
	}
	return t.fs.Rename(oldname, newname)
}

// MoveTo moves oldname to newname of dst (confine.Fs.MoveTo), both declared in their own
// transaction's file system.
func (t *TxFs) MoveTo(oldname string, dst *TxFs, newname string, noReplace bool) error {
	if err := t.allow("rename", oldname, false); err != nil {
		return err
	}
	if err := dst.allow("rename", newname, false); err != nil {
		return err
	}
	return t.fs.MoveTo(oldname, dst.fs, newname, noReplace)
}

// WriteAtomic replaces the declared file name with r's content (confine.Fs.WriteAtomic:
// through a link that stays in the zone, so where the link leads must be declared).
func (t *TxFs) WriteAtomic(name string, r io.Reader, perm os.FileMode) (int64, error) {
	if err := t.allow("write", name, true); err != nil {
		return 0, err
	}
	return t.fs.WriteAtomic(name, r, perm)
}

// Chmod changes the mode of the declared entry name.
func (t *TxFs) Chmod(name string, mode os.FileMode) error {
	if err := t.allow("chmod", name, true); err != nil {
		return err
	}
	return t.fs.Chmod(name, mode)
}

// Chown changes the owner of the declared entry name.
func (t *TxFs) Chown(name string, uid, gid int) error {
	if err := t.allow("chown", name, true); err != nil {
		return err
	}
	return t.fs.Chown(name, uid, gid)
}

// Chtimes changes the times of the declared entry name.
func (t *TxFs) Chtimes(name string, atime, mtime time.Time) error {
	if err := t.allow("chtimes", name, true); err != nil {
		return err
	}
	return t.fs.Chtimes(name, atime, mtime)
}

// SymlinkIfPossible makes the declared link newname pointing to oldname (confine.Fs checks
// the target stays in the zone).
func (t *TxFs) SymlinkIfPossible(oldname, newname string) error {
	if err := t.allow("symlink", newname, false); err != nil {
		return err
	}
	return t.fs.SymlinkIfPossible(oldname, newname)
}

package confine

import (
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
)

// tempPrefix starts the name of every temporary file WriteAtomic creates.
const tempPrefix = ".fileshed-tmp-"

// replicaLen is the length of a replica id: 16 base32 characters (80 random bits).
const replicaLen = 16

// replica is this process's replica id, random at start. Why one per process: a process is
// what dies (kill -9, a lost node), and its temporary names are what it leaves; the id in
// those names lets a sweep on another replica tell a dead process's leftovers from a live
// one's writes in flight on the same shared volume (core/sweep.go, core/replicas.go).
var replica = rand.Text()[:replicaLen]

// Replica is this process's replica id: 16 base32 characters, the same in every temporary
// name it makes (TempName) and in the state database's replicas table.
func Replica() string { return replica }

// IsTempName reports whether the last component of name is a temporary file or staging
// folder fileshed makes, so cleaners can delete leftovers without touching a user's
// ".fileshed-tmp-notes": the prefix ".fileshed-tmp-" then either a replica id, "-" and a
// random base32 text (TempName), or, as written before replica ids, the random text alone.
func IsTempName(name string) bool {
	_, ok := TempReplica(name)
	return ok
}

// TempReplica parses a temporary name (IsTempName): the replica id that made it, "" for a
// name of the older form that carries none; ok is false when name is not a temporary name.
func TempReplica(name string) (id string, ok bool) {
	rest, ok := strings.CutPrefix(path.Base(name), tempPrefix)
	if !ok {
		return "", false
	}
	if id, random, found := strings.Cut(rest, "-"); found {
		return id, len(id) == replicaLen && base32Text(id) && len(random) >= 26 && base32Text(random)
	}
	return "", len(rest) >= 26 && base32Text(rest)
}

// base32Text reports whether s is made of rand.Text's alphabet (upper-case base32).
func base32Text(s string) bool {
	for _, r := range s {
		if !('A' <= r && r <= 'Z' || '2' <= r && r <= '7') {
			return false
		}
	}
	return true
}

// TempName returns a fresh name that IsTempName recognises, carrying this process's replica
// id: for a temporary file or a staging folder, so crash leftovers can be told from a
// user's files, and a dead replica's from a live one's.
func TempName() string { return tempPrefix + replica + "-" + rand.Text() }

// held are the temporary names (base names) of this process's writes in flight: HoldTemp.
var held sync.Map

// HoldTemp returns a fresh TempName that this process holds until release, which the holder
// calls once the name is gone from the disk (renamed into place or removed). Why: a sweep
// running beside the write (core's sweeps, shed_maintenance) must tell a live write's
// temporary file from one an earlier error path of the same process left behind; only the
// latter is a leftover (Held).
func HoldTemp() (name string, release func()) {
	name = TempName()
	held.Store(name, struct{}{})
	return name, func() { held.Delete(name) }
}

// Held reports whether the last component of name is a temporary name that a write of
// this process holds (HoldTemp).
func Held(name string) bool {
	_, ok := held.Load(path.Base(name))
	return ok
}

// WriteAtomic replaces name with the content of r, durably: a temporary file
// in the same directory is written, synced, renamed over name, and the
// directory is synced. A new file gets the owner bits of perm (use 0600); an
// existing file keeps its mode. If name is a symlink that stays inside the zone,
// the content goes to its target (the link is kept); one that leaves the zone
// is ErrEscape. A directory is ErrIsDir; a parent that is not a directory is
// ErrNotDir; a missing parent is fs.ErrNotExist (parents are not created).
// On any error before the rename, the old content is intact and the temporary
// file is removed; only a failure to sync the directory after the rename
// leaves the new content in place with an error. Returns the bytes written.
func (f *Fs) WriteAtomic(name string, r io.Reader, perm os.FileMode) (int64, error) {
	const op = "write"
	c, err := f.path(op, name)
	if err != nil {
		return 0, err
	}
	phys, err := f.walk(splitClean(c))
	if err != nil {
		return 0, fail(op, name, err)
	}
	if len(phys) == 0 {
		return 0, &PathError{Op: op, Path: name, Err: ErrIsDir}
	}
	target := strings.Join(phys, "/")
	dir := rel(strings.Join(phys[:len(phys)-1], "/"))
	if err := f.checkParent(dir); err != nil {
		return 0, fail(op, name, err)
	}
	mode := ownerOnly(perm)
	switch fi, err := f.root.Lstat(target); {
	case err == nil && fi.IsDir():
		return 0, &PathError{Op: op, Path: name, Err: ErrIsDir}
	case err == nil:
		// The file's own mode, kept private: a file a command left 0644 (the group guard
		// putting it back, a patch after a command) becomes 0600 again, not stays readable.
		mode = ownerOnly(fi.Mode().Perm())
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fail(op, name, err)
	}
	n, err := f.replace(dir, target, r, mode)
	if err != nil {
		return 0, fail(op, name, err)
	}
	return n, nil
}

// checkParent requires dir to be an existing directory.
func (f *Fs) checkParent(dir string) error {
	fi, err := f.root.Stat(dir)
	if errors.Is(err, syscall.ENOTDIR) || err == nil && !fi.IsDir() {
		return ErrNotDir
	}
	return err
}

// replace writes r to a new temporary file in dir and renames it over target.
func (f *Fs) replace(dir, target string, r io.Reader, mode os.FileMode) (int64, error) {
	name, release := HoldTemp()
	defer release()
	tmp := path.Join(dir, name)
	// O_EXCL: never reuse (or follow a symlink planted at) an existing name.
	t, err := f.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	w, seal, err := f.sealTo(t)
	var n int64
	if err == nil {
		n, err = io.Copy(w, r)
	}
	if err == nil {
		err = seal()
	}
	if err == nil {
		// Explicit chmod: the umask must not decide a zone file's mode.
		err = t.Chmod(mode)
	}
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.root.Rename(tmp, target)
	}
	if err != nil {
		f.root.Remove(tmp)
		return 0, err
	}
	return n, f.syncDir(dir)
}

// syncDir makes a rename in dir durable.
func (f *Fs) syncDir(dir string) error {
	d, err := f.root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

package core

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
)

// A mirror is the decrypted working tree of an encrypted folder, for what needs plaintext
// on disk: the programs of shed_exec and shed_lockedit_exec, SQLite, PDF reading. It lives
// in a private folder of encryption.work_dir for one call and is removed after it (and at
// start, after a crash); what the call changed goes back into the folder encrypted.
type Mirror struct {
	src *confine.Fs // the encrypted folder
	Fs  *confine.Fs // the plaintext copy
	// root is the mirror's private folder; dir (root/data) holds the copy, and root can
	// serve as the space of a zone whose data is the copy (the lock guard's copies).
	Root, Dir string
	before    Snapshot
	// unreadable lists the files that could not be decrypted (left out of the copy, and
	// left alone by the sync).
	unreadable []string
	// ctx bounds the copy and the write-back: the call's deadline.
	ctx context.Context
	// notSaved counts the changes the write-back did not carry back because ctx ended
	// (each entry goes back whole or not at all), and unsaved is their growth in bytes and
	// names: the caller's measure of the copy counted it, the zone did not get it.
	NotSaved int
	Unsaved  Amount
	// copied counts the files decrypted into the copy.
	copied int
}

// OpenMirror is openMirrorWithin with no deadline (SQLite and locked-edit commands bound
// their own work).
func (s *Service) OpenMirror(src ReadFs, names []string) (*Mirror, error) {
	return s.OpenMirrorWithin(context.Background(), src, names)
}

// OpenMirrorWithin copies the encrypted folder src, decrypted, into a fresh private folder.
// names, when not nil, limits the copy to those files (a single database or PDF). ctx bounds
// the copy (a TIMEOUT, the partial copy removed) and the later write-back. The caller
// removes it.
func (s *Service) OpenMirrorWithin(ctx context.Context, src ReadFs, names []string) (*Mirror, error) {
	root, err := s.WorkTemp()
	if err != nil {
		return nil, Errf(InternalError, "Cannot prepare the decrypted working folder").Because(err)
	}
	m := &Mirror{src: src.f, Root: root, Dir: DataDir(root), ctx: ctx}
	if m.Fs, err = confine.New(m.Dir); err != nil {
		_ = os.RemoveAll(root)
		return nil, Errf(InternalError, "Cannot open the decrypted working folder").Because(err)
	}
	if err := m.fill(names); err != nil {
		m.Remove()
		if ctx.Err() != nil {
			return nil, Errf(Timeout, "The call's time ran out while its files were decrypted into a working copy (%d copied)", m.copied).
				With("copied", m.copied).Because(ctx.Err())
		}
		return nil, Errf(InternalError, "Cannot decrypt the zone into the working folder").Because(err)
	}
	if m.before, err = TakeSnapshot(m.Dir); err != nil {
		m.Remove()
		return nil, Errf(InternalError, "Cannot measure the decrypted working folder").Because(err)
	}
	return m, nil
}

// fill decrypts src (or only names) into the mirror, keeping modes, times and symlinks.
func (m *Mirror) fill(names []string) error {
	raw := m.src.Raw()
	if names != nil {
		for _, n := range names {
			if err := m.ctx.Err(); err != nil {
				return err
			}
			// Only folders the zone has: a command must not find one that is not there.
			if dir := path.Dir(n); dir != "." {
				if fi, err := raw.Stat(dir); err != nil || !fi.IsDir() {
					continue
				}
				if err := m.Fs.MkdirAll(dir, 0o700); err != nil {
					return err
				}
			}
			fi, _, err := raw.LstatIfPossible(n)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if err := m.copyIn(n, fi); err != nil {
				return err
			}
		}
		return nil
	}
	return afero.Walk(raw, "", func(rel string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := m.ctx.Err(); err != nil {
			return err
		}
		if rel == "" || confine.IsTempName(path.Base(rel)) {
			return nil
		}
		if fi.IsDir() {
			return m.Fs.Mkdir(rel, fi.Mode().Perm()|0o700)
		}
		return m.copyIn(rel, fi)
	})
}

// copyIn copies one entry described by fi (lstat) into the mirror.
func (m *Mirror) copyIn(rel string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := m.src.ReadlinkIfPossible(rel)
		if err != nil {
			return err
		}
		return os.Symlink(target, filepath.Join(m.Dir, filepath.FromSlash(rel)))
	case !fi.Mode().IsRegular():
		return nil // never a FIFO or device into the copy
	}
	in, err := m.src.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if isDecryptError(err) {
			m.unreadable = append(m.unreadable, rel)
			return nil
		}
		return err
	}
	defer in.Close()
	host := filepath.Join(m.Dir, filepath.FromSlash(rel))
	// The decrypted copy is the owner's alone, whatever mode the sealed file has.
	out, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&0o700)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, ctxReader{m.ctx, in})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if isDecryptError(err) {
		m.unreadable = append(m.unreadable, rel)
		return os.Remove(host)
	}
	if err != nil {
		return err
	}
	m.copied++
	return os.Chtimes(host, fi.ModTime(), fi.ModTime())
}

// ctxReader ends a copy when ctx ends: the deadline bounds a big file's copy too.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// sync writes back, encrypted, what changed in the mirror since it was made: new and
// changed files (whole, atomically), new folders and symlinks, and removals. Files the
// call did not touch are left alone, so a concurrent write to them is not undone. One entry
// that cannot go back does not stop the others: a symlink the zone refuses (its target
// leaves the zone) is listed in skipped; any other failure is an INTERNAL_ERROR after the
// rest was written. When m.ctx ends, the entries not yet carried back are left as they
// are in the folder and counted in notSaved and unsaved.
func (m *Mirror) sync() (skipped []string, err error) {
	after, err := m.measure()
	if err != nil {
		return nil, err
	}
	return m.carry(after)
}

// measure is the copy as it is now, for carry.
func (m *Mirror) measure() (Snapshot, error) {
	after, err := TakeSnapshot(m.Dir)
	if err != nil {
		return Snapshot{}, Errf(InternalError, "Cannot measure the decrypted copy").Because(err)
	}
	return after, nil
}

// carry is sync with the copy measured as after.
func (m *Mirror) carry(after Snapshot) (skipped []string, err error) {
	var gone, names []string
	for rel := range m.before.Entries {
		if _, ok := after.Entries[rel]; !ok {
			gone = append(gone, rel)
		}
	}
	for rel, now := range after.Entries {
		if was, existed := m.before.Entries[rel]; !existed || now != was || now.Other {
			names = append(names, rel)
		}
	}
	slices.Sort(gone)
	slices.Sort(names) // parents first
	var errs []error
	// cut counts an entry the deadline kept from the folder: its growth stays out of it.
	cut := func(rel string) {
		m.NotSaved++
		was, existed := m.before.Entries[rel]
		now, exists := after.Entries[rel]
		m.Unsaved.Bytes += now.Size - was.Size
		if exists != existed {
			m.Unsaved.Files += map[bool]int64{true: 1, false: -1}[exists]
		}
	}
	for i := len(gone) - 1; i >= 0; i-- { // children first
		if m.ctx.Err() != nil {
			cut(gone[i])
			continue
		}
		if err := m.src.RemoveAll(gone[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, rel := range names {
		if m.ctx.Err() != nil {
			cut(rel)
			continue
		}
		err := m.syncOne(rel, after.Entries[rel], m.before.Entries[rel])
		switch {
		case err != nil && m.ctx.Err() != nil:
			cut(rel) // stopped in the middle of the file: the old one is still whole
		case errors.Is(err, confine.ErrEscape), errors.Is(err, confine.ErrInvalid):
			skipped = append(skipped, rel)
		case err != nil:
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return skipped, Errf(InternalError, "Cannot write back all the changes made on the decrypted copy").Because(err)
	}
	return skipped, nil
}

// WriteBack syncs the mirror and returns the files it left out: notDecrypted (damaged, not
// copied, untouched) and notWrittenBack (refused symlinks).
func (m *Mirror) WriteBack() (notDecrypted, notWrittenBack []string, err error) {
	skipped, err := m.sync()
	return m.unreadable, skipped, err
}

// syncOne puts the mirror's entry rel (now; was before the call) into the folder.
func (m *Mirror) syncOne(rel string, now, was entry) error {
	host := filepath.Join(m.Dir, filepath.FromSlash(rel))
	switch {
	case now.Dir:
		if !was.Dir {
			_ = m.src.RemoveAll(rel)
		}
		return m.src.MkdirAll(rel, 0o700)
	case now.Other:
		target, err := os.Readlink(host)
		if err != nil {
			return nil // a FIFO or socket: never carried back
		}
		if cur, err := m.src.ReadlinkIfPossible(rel); err == nil && cur == target {
			return nil
		}
		_ = m.src.RemoveAll(rel)
		return m.src.SymlinkIfPossible(target, rel)
	}
	if was.Dir || was.Other {
		_ = m.src.RemoveAll(rel)
	}
	in, err := os.Open(host)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if _, err := m.src.WriteAtomic(rel, ctxReader{m.ctx, in}, fi.Mode().Perm()); err != nil {
		return err
	}
	return m.src.Chmod(rel, fi.Mode().Perm())
}

// ReadFs is the decrypted copy as a family reads it (a command or poppler runs in it).
func (m *Mirror) ReadFs() ReadFs { return ReadFs{m.Fs} }

// MkdirAll creates the folder dir (and its parents) in the plaintext copy, where a call
// creates a new file (shed_sqlite's new database in a new folder).
func (m *Mirror) MkdirAll(dir string) error { return m.Fs.MkdirAll(dir, 0o700) }

// OperandOnly are the commands that open no file but the ones their arguments name (the
// policy confines every such argument: operands and option values such as sort -o, grep
// -f, jq --slurpfile). Not here: commands that read files named elsewhere (sqlite3's
// journals, patch's targets, tar's -T lists), or that walk folders (find; any command given a
// folder falls back to the whole zone anyway).
var OperandOnly = map[string]bool{
	"cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true,
	"sed": true, "awk": true, "gawk": true, "mawk": true, "jq": true, "yq": true, "sort": true,
	"uniq": true, "cut": true, "nl": true, "tac": true, "rev": true, "fold": true, "fmt": true,
	"paste": true, "join": true, "comm": true, "diff": true, "cmp": true, "md5sum": true,
	"sha1sum": true, "sha256sum": true, "sha512sum": true, "base64": true, "xxd": true, "od": true,
	"strings": true, "file": true, "iconv": true, "expand": true, "unexpand": true, "column": true,
	"split": true, "csplit": true, "gzip": true, "gunzip": true, "zcat": true, "ls": true,
	"stat": true, "du": true, "touch": true, "cp": true, "mv": true, "rm": true, "mkdir": true,
	"rmdir": true, "truncate": true, "xmllint": true, "pdftotext": true, "pdfinfo": true,
	"dos2unix": true, "unix2dos": true, "shuf": true, "tee": true,
}

// Remove deletes the plaintext copy.
func (m *Mirror) Remove() {
	if m.Fs != nil {
		_ = m.Fs.Close()
	}
	_ = os.RemoveAll(m.Root)
}

// isDecryptError reports an encrypted file that cannot be decrypted.
func isDecryptError(err error) bool {
	return errors.Is(err, crypt.ErrAuth) || errors.Is(err, crypt.ErrFormat)
}

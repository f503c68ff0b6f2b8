package core

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
)

// The rewrite of a user's encrypted zones (shed_encryption migrate and disable): every
// regular file of Storage and of each conversation's Uploads is encrypted, or decrypted, in
// place, atomically, as a write of the kernel. The walk holds the key change (HoldKeyChange:
// the owner's quota lock, exclusively), so no write of the user that reserves runs meanwhile,
// and each file is rewritten under its own lock after the rules of any writer: a file
// another conversation holds in a locked edit is not replaced, nor one whose lock another
// call holds (a writer that took its file before the walk began, waiting for the owner's
// lock: it writes through the zone as it resolved it). Both are skipped and reported in
// SealCount.Errors, and the next run takes them.

// SealOp is what SealWalk does to each file.
type SealOp int

// The operations of SealWalk.
const (
	// SealCount only counts (status); with a nil key, by header.
	SealCount SealOp = iota
	// SealEncrypt encrypts the plaintext files (migrate).
	SealEncrypt
	// SealDecrypt decrypts the files sealed with the key (disable).
	SealDecrypt
)

// Sealed is what SealWalk counts: the files encrypted and not (as found, before any change),
// the files changed, and what could not be processed (zone/path: why).
type Sealed struct {
	Encrypted int
	Plain     int
	Changed   int
	Errors    []string
}

// sealFileWait bounds the wait for a file's lock during the walk. Whoever holds it took it
// before the walk took the owner's lock, and waits for that lock to reserve: waiting longer
// only delays the skip.
const sealFileWait = 500 * time.Millisecond

// HoldKeyChange serialises the changes of a user's encryption (setup, migrate, disable): it
// takes the owner's quota lock exclusively and returns its release. Every write of the user
// holds that lock shared from its reservation to its end, so none runs meanwhile; and each
// change reads the key's state under it, after the change before it ended (which forgot the
// cached state), so the state a change checks is still the state when it ends. Why: a
// migrate that checked 'active' and then waited for a disable's walk sealed every file of
// the now disabled account, and commands, which run on the raw files of a disabled zone,
// read ciphertext (issue 24). Callers must not hold the owner's lock (EnsureUsage would
// deadlock under it).
func (s *Service) HoldKeyChange(ctx context.Context, userID string) (func(), error) {
	return s.HoldOwner(ctx, store.Owner{Kind: "user", ID: userID}, lock.Exclusive)
}

// SealWalk visits every regular file of c's encrypted zones (Storage, every conversation's
// Uploads), counts them by state and applies op (key nil: count only, by header). With an
// op other than SealCount the caller holds HoldKeyChange, and each file is rewritten under
// its lock as the comment above says.
func (s *Service) SealWalk(ctx context.Context, c Caller, key *crypt.Key, op SealOp) (Sealed, error) {
	n := Sealed{Errors: []string{}}
	for _, d := range s.sealedDirs(c.UserID) {
		if _, err := os.Stat(d.dir); errors.Is(err, fs.ErrNotExist) {
			continue // never used: nothing to count, and status creates no folder
		}
		fsys, err := confine.New(d.dir)
		if err != nil {
			return n, Errf(InternalError, "Cannot open %s", d.name).Because(err)
		}
		fsys.Seal(key)
		d.z.fs = fsys
		err = afero.Walk(fsys.Raw(), "", func(rel string, fi fs.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() || confine.IsTempName(path.Base(rel)) {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if op == SealCount || key == nil {
				n.count(d.name, rel, fileSealState(fsys, rel, key))
				return nil
			}
			changed, err := s.resealFile(ctx, c, d.z, rel, key, op, &n, d.name)
			if err != nil {
				n.Errors = append(n.Errors, d.name+"/"+rel+": "+shortErr(err))
			} else if changed {
				n.Changed++
			}
			return nil
		})
		fsys.Close()
		if err != nil {
			return n, Errf(InternalError, "Cannot walk %s", d.name).Because(err)
		}
	}
	return n, nil
}

// count counts a file of state st; false for a file that is not the key's (reported).
func (n *Sealed) count(name, rel string, st sealState) bool {
	switch st {
	case sealedFile:
		n.Encrypted++
	case plainFile:
		n.Plain++
	case foreignFile:
		n.Errors = append(n.Errors, name+"/"+rel+": encrypted, but not readable with your key (damaged?)")
		return false
	}
	return true
}

// resealFile applies op to rel of z under rel's lock: counted as it is then, skipped when
// its lock stays held or another conversation holds it in a locked edit, rewritten
// atomically otherwise.
func (s *Service) resealFile(ctx context.Context, c Caller, z *Zone, rel string, key *crypt.Key, op SealOp, n *Sealed, name string) (bool, error) {
	wait, stop := context.WithTimeout(ctx, sealFileWait)
	le, err := s.hold(wait, fileKey(z, rel), lock.Exclusive, "another change of "+rel)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if !n.count(name, rel, fileSealState(z.fs, rel, key)) { // counted as it is now
			return false, nil
		}
		return false, errors.New("another call is writing it: run this action again when it has finished")
	}
	defer le.Unlock()
	st := fileSealState(z.fs, rel, key)
	if !n.count(name, rel, st) {
		return false, nil
	}
	if op == SealEncrypt && st != plainFile || op == SealDecrypt && st != sealedFile {
		return false, nil
	}
	if err := s.checkUnlocked(ctx, c, z, rel); err != nil {
		if e, ok := AsError(err); ok && e.Code == FileLocked {
			return false, errors.New("another conversation holds it in a locked edit: run this action again once it is saved or cancelled")
		}
		return false, err
	}
	if err := CheckLeases(false, le); err != nil {
		return false, err
	}
	from, to := z.fs.Raw(), z.fs // encrypt: read the raw plaintext, write sealed
	if op == SealDecrypt {
		from, to = z.fs, z.fs.Raw()
	}
	src, err := from.Open(rel)
	if err != nil {
		return false, err
	}
	defer src.Close()
	_, err = to.WriteAtomic(rel, src, 0o600)
	return err == nil, err
}

// shortErr is an error's text without the zone-relative path the message already names.
func shortErr(err error) string {
	var pe *confine.PathError
	switch {
	case errors.Is(err, crypt.ErrAuth):
		return "its encrypted content was altered"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// sealState is what a file is with respect to the user's key.
type sealState int

const (
	plainFile   sealState = iota // no header: not encrypted
	sealedFile                   // encrypted with the user's key
	foreignFile                  // a header, but not sealed with this key (damaged or alien)
)

// fileSealState reads rel's header (raw) and, when it has one, authenticates it with key
// (nil: a status without a usable key counts the header only).
func fileSealState(fsys *confine.Fs, rel string, key *crypt.Key) sealState {
	f, err := fsys.Raw().OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return plainFile
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return plainFile
	}
	if !confine.HasMagic(f) {
		return plainFile
	}
	if key == nil || crypt.Check(f, fi.Size(), key) { // without a key, the header is all that tells
		return sealedFile
	}
	return foreignFile
}

// sealedDir is one folder of encrypted files: its zone (kind, owner, conversation: its
// locks' keys; Fs set by the walk) and its name in messages.
type sealedDir struct {
	dir, name string
	z         *Zone
}

// sealedDirs are the user's folders that encryption covers: Storage's data and each
// conversation's Uploads.
func (s *Service) sealedDirs(userID string) []sealedDir {
	l, o := s.Layout(), store.Owner{Kind: "user", ID: userID}
	dirs := []sealedDir{{l.ZoneRoot(o, Storage), "Storage", &Zone{Kind: Storage, Name: "Storage", Label: "storage", Owner: o}}}
	convs, _ := os.ReadDir(l.ZoneRoot(o, Uploads))
	for _, c := range convs {
		if c.IsDir() {
			z := &Zone{Kind: Uploads, Name: "Uploads", Label: "uploads", Owner: o, ReadOnly: true, conv: c.Name()}
			dirs = append(dirs, sealedDir{l.UploadsOf(userID, c.Name()), "Uploads/" + c.Name(), z})
		}
	}
	return dirs
}

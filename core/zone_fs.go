package core

import (
	"os"
	"syscall"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
)

// ReadFs is the face of a confined file system that a family gets (issue 35 item 1): a
// zone's (Zone.Fs), a decrypted mirror's (Mirror.ReadFs), a working copy's box (WorkBox.Fs). It reads and resolves
// names, and it has no write method, so a family's write through it does not compile;
// the writable file system stays inside core, behind the transaction (Tx.Fs). Two ReadFs
// are equal when they read the same confined file system.
type ReadFs struct{ f *confine.Fs }

// Open opens name for reading (the descriptor is read-only: a write on it fails).
func (r ReadFs) Open(name string) (afero.File, error) {
	return r.f.Open(name)
}

// OpenNoBlock opens name for reading without blocking on a FIFO, following a final
// symlink only when follow (a download link's target).
func (r ReadFs) OpenNoBlock(name string, follow bool) (afero.File, error) {
	// Constant flags, each a read: the rules test sees a read.
	const read, noFollow = os.O_RDONLY | syscall.O_NONBLOCK, os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW
	if follow {
		return r.f.OpenFile(name, read, 0)
	}
	return r.f.OpenFile(name, noFollow, 0)
}

// Stat describes name, following symlinks inside the zone.
func (r ReadFs) Stat(name string) (os.FileInfo, error) {
	return r.f.Stat(name)
}

// LstatIfPossible describes name without following a final symlink (afero.Lstater).
func (r ReadFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	return r.f.LstatIfPossible(name)
}

// ReadlinkIfPossible returns the target of the symlink name as stored (afero.LinkReader).
func (r ReadFs) ReadlinkIfPossible(name string) (string, error) {
	return r.f.ReadlinkIfPossible(name)
}

// Confined resolves name through the symlinks inside the file system (confine.Fs.Confined).
func (r ReadFs) Confined(name string) (string, error) {
	return r.f.Confined(name)
}

// Dir is the host path of the file system: ONLY the working directory of a subprocess,
// never in a message.
func (r ReadFs) Dir() string {
	return r.f.Dir()
}

// Sealed reports whether the file system encrypts what is written to it.
func (r ReadFs) Sealed() bool { return r.f.Sealed() }

// Raw is the same file system read without decrypting (confine.Fs.Raw).
func (r ReadFs) Raw() ReadFs {
	return ReadFs{r.f.Raw()}
}

// Sub opens the folder name as a file system of its own, read-only too; close it with
// the function returned (never the zone's own ReadFs).
func (r ReadFs) Sub(name string) (ReadFs, func(), error) {
	sub, err := r.f.Sub(name)
	if err != nil {
		return ReadFs{}, nil, err
	}
	return ReadFs{sub}, func() { _ = sub.Close() }, nil
}

// Afero is the file system as an afero.Fs for afero's read helpers (afero.NewIOFS,
// afero.ReadFile, afero.Walk): every write through it fails (afero.ReadOnlyFs).
func (r ReadFs) Afero() afero.Fs {
	return afero.NewReadOnlyFs(r.f)
}

package core

import (
	"context"
	"crypto/rand"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/fileshed/fileshed/core/confine"
)

// Working copies count against the quota (DESIGN §5, issue 32 item 8): the copy of a locked
// edit lives in the conversation's editzone, outside the zone's data, and holds as many
// bytes as the file. It is charged to the zone's owner from its open, follows every change
// of its size, and is given back when it goes (save, cancel, expiry); Reconcile measures the
// editzones (ownerExtras). Bytes only: a copy takes no name of the file quota.

// WorkingCopySize is the size of the working copy p of the editzone ez: its plaintext size
// when encrypted, 0 when it is missing or not a regular file (a link is never followed).
func WorkingCopySize(ez *confine.Fs, p string) int64 {
	fi, _, err := ez.LstatIfPossible(p)
	if err != nil || fi.Mode()&fs.ModeType != 0 {
		return 0
	}
	return fi.Size()
}

// changeWorkingCopy runs write, which makes the working copy p of ez (an editzone of z)
// size bytes, with the growth reserved against z's owner's quota first (QUOTA_EXCEEDED when
// it does not fit: nothing is written), then settled with the size the copy has after it.
// Callers check the file-size limit themselves.
func (s *Service) changeWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string, size int64, write func() error) error {
	old := WorkingCopySize(ez, p)
	r, err := s.reserve(ctx, z, -1, Amount{Bytes: size - old}, 0)
	if err != nil {
		return err
	}
	err = write()
	r.Settle(ctx, Amount{Bytes: WorkingCopySize(ez, p) - old})
	return err
}

// DropWorkingCopy removes the working copy p of ez (RemoveWorkingCopy) and gives its bytes
// back to z's owner.
func (s *Service) DropWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string) {
	if err := s.changeWorkingCopy(ctx, z, ez, p, 0, func() error { RemoveWorkingCopy(ez, p); return nil }); err != nil {
		RemoveWorkingCopy(ez, p) // the quota could not be held: the copy goes anyway, reconcile repairs the count
	}
}

// workingCopyChanged settles a change of the working copy p of ez that could not be
// reserved beforehand (a command run on it): before is its size before the change. Between
// the two measures a reconcile may see the change too: that drift is repaired by the next
// shed_maintenance.
func (s *Service) workingCopyChanged(ctx context.Context, z *Zone, ez *confine.Fs, p string, before int64) {
	r, err := s.reserve(context.WithoutCancel(ctx), z, -1, Amount{}, 0)
	if err != nil {
		return // drift that shed_maintenance's reconcile repairs
	}
	r.Settle(ctx, Amount{Bytes: WorkingCopySize(ez, p) - before})
}

// WriteWorkingCopy writes r as the working copy p of ez (an editzone of z), or appends it
// when appendTo, so that the copy is size bytes: the growth reserved against z's owner's
// quota first (QUOTA_EXCEEDED: nothing is written), the parents made 0700, the copy
// replaced atomically (0600) or appended durably, the usage settled with the size it has
// after. It answers the bytes written. Callers check the file-size limit themselves.
func (s *Service) WriteWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string, size int64, r io.Reader, appendTo bool) (int64, error) {
	var n int64
	err := s.changeWorkingCopy(ctx, z, ez, p, size, func() error {
		if d := path.Dir(p); d != "." {
			if err := ez.MkdirAll(d, 0o700); err != nil {
				return Errf(InternalError, "Cannot prepare the working copy of %s", p).Because(err)
			}
		}
		var err error
		if appendTo {
			n, err = appendWorkingCopy(ez, p, r)
		} else {
			n, err = ez.WriteAtomic(p, r, 0o600)
		}
		if err != nil {
			return Errf(InternalError, "Cannot write the working copy of %s", p).Because(err)
		}
		return nil
	})
	return n, err
}

// appendWorkingCopy appends r to the working copy p durably. An encrypted copy is
// rewritten whole (old content, then r) through the atomic write.
func appendWorkingCopy(ez *confine.Fs, p string, r io.Reader) (int64, error) {
	if ez.Sealed() {
		old, err := ez.Open(p)
		if err != nil {
			return 0, err
		}
		defer old.Close()
		return ez.WriteAtomic(p, io.MultiReader(old, r), 0o600)
	}
	f, err := ez.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// execBoxPrefix names the private folder a working copy is moved into while a command
// runs; maintenance removes one left by a crash (no lock covers its files).
const execBoxPrefix = ".fileshed-exec-"

// WorkBox is a working copy moved into a fresh private folder of its editzone while a
// command runs there (shed_lockedit_exec): the folder is the command's only tree, so the
// original, its siblings and the conversation's other working copies are out of its reach.
type WorkBox struct {
	// Fs is the private folder (read-only to the family: the command writes it), sealed
	// like the editzone; Base names the copy in it.
	Fs      ReadFs
	Base    string
	box     *confine.Fs
	s       *Service
	ctx     context.Context
	z       *Zone
	ez      *confine.Fs
	name, p string
	before  int64
}

// BoxWorkingCopy moves the working copy p of ez (an editzone of z) into a fresh private
// folder. Return moves it back; Close removes the folder (and a copy not returned with it)
// and settles the change of the copy's size, which a command cannot reserve beforehand
// (between the two measures a reconcile may see the change too: that drift is repaired by
// the next shed_maintenance).
func (s *Service) BoxWorkingCopy(ctx context.Context, z *Zone, ez *confine.Fs, p string) (*WorkBox, error) {
	b := &WorkBox{Base: path.Base(p), s: s, ctx: ctx, z: z, ez: ez, name: execBoxPrefix + rand.Text(), p: p,
		before: WorkingCopySize(ez, p)}
	if err := ez.Mkdir(b.name, 0o700); err != nil {
		return nil, Errf(InternalError, "Cannot prepare the command's folder").Because(err)
	}
	if err := ez.Rename(p, b.name+"/"+b.Base); err != nil {
		_ = ez.RemoveAll(b.name)
		return nil, Errf(InternalError, "Cannot prepare the working copy of %s", p).Because(err)
	}
	box, err := confine.New(filepath.Join(ez.Dir(), b.name))
	if err != nil {
		_ = ez.Rename(b.name+"/"+b.Base, p)
		_ = ez.RemoveAll(b.name)
		return nil, Errf(InternalError, "Cannot open the command's folder").Because(err)
	}
	box.ShareSeal(ez)
	b.Fs, b.box = ReadFs{box}, box
	return b, nil
}

// Return moves the copy back to its place: an error when the command removed it or
// replaced it by something that cannot be moved.
func (b *WorkBox) Return() error {
	return b.ez.Rename(b.name+"/"+b.Base, b.p)
}

// Close closes the folder, removes it with whatever the command left in it, and settles
// the copy's change of size.
func (b *WorkBox) Close() {
	_ = b.box.Close()
	_ = b.ez.RemoveAll(b.name)
	b.s.workingCopyChanged(b.ctx, b.z, b.ez, b.p, b.before)
}

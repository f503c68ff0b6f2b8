package core

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fileshed/fileshed/core/vcs"
)

// Commands and locked edits (reference §2.7): a file that another conversation holds in a
// locked edit is left unchanged by every command. A command whose operand names it is
// refused up front (FILE_LOCKED, like the file tools); a command that may reach it
// otherwise (`rm -r .`, `find -delete`, a glob-free tar) runs, and each such file is
// compared afterwards with a copy taken before and put back when the command changed,
// replaced or removed it; data.reverted lists them.

// guardPrefix names the folders of the copies, beside the zone's data.
const guardPrefix = ".exec-guard-"

// lockGuard protects the files of a zone locked by other conversations during one command.
type lockGuard struct {
	z *Zone
	// dir holds the copies, beside the zone's data (outside every command's reach).
	dir string
	// locked are the paths other conversations hold.
	locked []string
	// copies maps each protected zone-relative path to its copy: the file before the
	// command, or as its holder last wrote it beside the command (keep); mu guards it
	// from those writes.
	copies map[string]string
	mu     sync.Mutex
	// beside notes the writes beside the command (core/beside.go): a locked file its holder
	// wrote meanwhile is theirs, not the command's (follow).
	beside *BesideRun
}

// follow watches run, the note of the writes beside the command, before the command runs:
// a protected file its holder writes meanwhile is copied again as written, so that what is
// put back, when the command changes it afterwards, is the holder's last save.
func (g *lockGuard) follow(run *BesideRun) {
	if g == nil || run == nil {
		return
	}
	g.beside, run.Kept = run, g.keep
}

// keep copies p again as a write beside the command left it, when p is a protected file.
func (g *lockGuard) keep(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old, ok := g.copies[p]
	if !ok {
		return
	}
	cp := filepath.Join(g.dir, rand.Text())
	if copyOut(g.z, p, cp) != nil {
		_ = os.Remove(cp)
		return // the copy from before stays what is put back
	}
	g.copies[p] = cp
	_ = os.Remove(old)
}

// guardLocks refuses a command whose operands name a file locked by another conversation,
// and prepares the guard of every other such file of the zone (nil when there is none): its
// copies are taken once the command holds its space (take).
func (s *Service) guardLocks(ctx context.Context, c Caller, z *Zone, operands []string) (*lockGuard, error) {
	if z.ReadOnly {
		return nil, nil
	}
	// Copies left by a crash: the owner's writing commands run one at a time, so no other
	// guard of this zone is in use now.
	if old, _ := filepath.Glob(SpaceEntry(z.Space, guardPrefix+"*")); len(old) > 0 {
		for _, d := range old {
			_ = os.RemoveAll(d)
		}
	}
	locks, err := s.locksAgainst(ctx, z, c)
	if err != nil || len(locks) == 0 {
		return nil, err
	}
	for _, op := range operands {
		if l, ok := locks[op]; ok {
			return nil, s.FileLocked(z, op, l).
				WithHint("Another conversation is editing %s (shed_lockedit(action='open')): wait for it, or use shed_lockedit(action='force_unlock')", op)
		}
	}
	return &lockGuard{z: z, dir: SpaceEntry(z.Space, guardPrefix+rand.Text()), locked: slices.Sorted(maps.Keys(locks)),
		copies: map[string]string{}}, nil
}

// take copies the protected files, with the command's space held (execWrite): no write is in
// flight then, and those that come beside the command refresh the copies (follow). Why not
// in guardLocks: a locked edit saved while the command waited for its space came after the
// copy, and was put back as the command's change.
func (g *lockGuard) take() error {
	if g == nil {
		return nil
	}
	if err := os.Mkdir(g.dir, 0o700); err != nil {
		return Errf(InternalError, "Cannot protect the locked files").Because(err)
	}
	for _, p := range g.locked {
		cp := filepath.Join(g.dir, rand.Text())
		if err := copyOut(g.z, p, cp); errors.Is(err, fs.ErrNotExist) {
			continue // no file yet: nothing to protect
		} else if err != nil {
			return Errf(InternalError, "Cannot protect the locked file %s", p).With("path", p).Because(err)
		}
		g.copies[p] = cp
	}
	return nil
}

// copyOut copies the regular file p of z to the host path dst.
func copyOut(z *Zone, p, dst string) error {
	fi, _, err := z.fs.LstatIfPossible(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fs.ErrNotExist // a folder or a link: the lock protects no content here
	}
	src, err := z.fs.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// restore puts back, under l (the repository lock; nil outside a versioned zone), every
// protected file the command changed: from its copy, or from HEAD for a recovery's guard
// (no copy: HEAD is the file as the dead command found it). It returns them as
// data.reverted entries, and the first file it could not put back.
func (g *lockGuard) restore(l *vcs.Locked) ([]RevertedFile, error) {
	if g == nil {
		return nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var reverted []RevertedFile
	var firstErr error
	for _, p := range slices.Sorted(maps.Keys(g.copies)) {
		var err error
		if cp := g.copies[p]; cp == "" {
			same, serr := sameAsHead(l, g.z, p)
			if serr != nil || same {
				continue // not in HEAD (nothing to put back), or unchanged
			}
			err = putBack(l, g.z.fs, p, Version{})
		} else {
			if sameContent(g.z, p, cp) || g.beside.LeftAsWritten(g.z, p) {
				continue
			}
			err = putBackCopy(g.z.fs, p, cp)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = notRestored(p, err)
			}
			continue
		}
		reverted = append(reverted, RevertedFile{Path: p, Reason: RevertedLocked})
	}
	return reverted, firstErr
}

// sameContent reports whether the zone's file p is a regular file holding the bytes of cp.
func sameContent(z *Zone, p, cp string) bool {
	fi, _, err := z.fs.LstatIfPossible(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	ci, err := os.Stat(cp)
	if err != nil || ci.Size() != fi.Size() {
		return false
	}
	a, err := z.fs.Open(p)
	if err != nil {
		return false
	}
	defer a.Close()
	b, err := os.Open(cp)
	if err != nil {
		return false
	}
	defer b.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF)
		}
	}
}

// close removes the copies.
func (g *lockGuard) close() {
	if g != nil {
		_ = os.RemoveAll(g.dir)
	}
}

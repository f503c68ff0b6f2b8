package core

import (
	"context"
	"os"
	"path"
	"time"

	"github.com/fileshed/fileshed/core/confine"
)

// The sweep of a zone's editzones (shed_maintenance): a working copy whose conversation no
// longer holds the lock of its file is an orphan (the lock expired and was released, or was
// forced), and a temporary file there is a leftover of a write that died. Both go, as the
// kernel's writes: an orphan under its edit key and only while still an orphan (given back
// to the owner's quota: DropWorkingCopy), a temporary name by the sweeps' rule (leftover).

// SweepEditzones removes every file of z's editzones that no lock of its conversation
// covers, the temporary files the sweeps' rule picks (a write in flight, of this server or
// of another live replica, keeps its own), then the empty folders. It returns what it
// removed, as "{zone}/editzone/{conversation}/{path}".
func (s *Service) SweepEditzones(ctx context.Context, z *Zone) ([]string, error) {
	convs, err := os.ReadDir(EditzonesDir(z.Space))
	if err != nil {
		return nil, nil // no editzone yet
	}
	leftover := s.TempLeftover(ctx)
	var removed []string
	for _, cd := range convs {
		if !cd.IsDir() || !ValidID(cd.Name()) {
			continue
		}
		ez, err := confine.New(EditzoneDir(z.Space, cd.Name()))
		if err != nil {
			return removed, Errf(InternalError, "Cannot open an editzone of %s", z.Name).Because(err)
		}
		sw := editzoneSweep{s: s, z: z, ez: ez, conv: cd.Name(), leftover: leftover}
		err = sw.dir(ctx, "")
		removed = append(removed, sw.removed...)
		_ = ez.Close()
		if err != nil {
			return removed, err
		}
		_ = os.Remove(EditzoneDir(z.Space, cd.Name())) // only succeeds when empty
	}
	return removed, nil
}

// editzoneSweep is the sweep of one conversation's editzone.
type editzoneSweep struct {
	s        *Service
	z        *Zone
	ez       *confine.Fs
	conv     string
	leftover func(string, time.Time) bool
	removed  []string
}

// dir walks one folder of the editzone (symlinks are never followed).
func (sw *editzoneSweep) dir(ctx context.Context, dir string) error {
	f, err := sw.ez.Open(dir)
	if err != nil {
		return nil
	}
	entries, err := f.Readdir(-1)
	_ = f.Close()
	if err != nil {
		return nil
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.IsDir() {
			if err := sw.dir(ctx, p); err != nil {
				return err
			}
			_ = sw.ez.Remove(p) // only succeeds when empty
			continue
		}
		if confine.IsTempName(p) {
			if sw.leftover(p, e.ModTime()) && sw.ez.Remove(p) == nil {
				sw.note(p)
			}
			continue
		}
		if err := sw.orphan(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// orphan removes the working copy p when its conversation holds no lock on it: decided
// again under the edit key (a shed_lockedit_open may have just taken the lock, on another
// replica if the key was lost meanwhile: LOCK_ERROR).
func (sw *editzoneSweep) orphan(ctx context.Context, p string) error {
	if orphan, err := sw.isOrphan(ctx, p); err != nil || !orphan {
		return err
	}
	le, err := sw.s.EditLease(ctx, sw.z, p)
	if err != nil {
		return err
	}
	defer le.Unlock()
	orphan, err := sw.isOrphan(ctx, p)
	if err == nil && orphan {
		if err = CheckLeases(false, le); err == nil {
			sw.s.DropWorkingCopy(ctx, sw.z, sw.ez, p)
			if _, _, gone := sw.ez.LstatIfPossible(p); gone != nil {
				sw.note(p)
			}
		}
	}
	return err
}

// isOrphan reports whether the working copy p of the conversation has no lock of its own.
func (sw *editzoneSweep) isOrphan(ctx context.Context, p string) (bool, error) {
	l, ok, err := sw.s.db.LockOf(ctx, zoneKey(sw.z), p)
	if err != nil {
		return false, LockErr(p, err)
	}
	return !ok || l.ConvID != sw.conv, nil
}

// note records a removed file for the report.
func (sw *editzoneSweep) note(p string) {
	sw.removed = append(sw.removed, sw.z.Name+"/editzone/"+sw.conv+"/"+p)
}

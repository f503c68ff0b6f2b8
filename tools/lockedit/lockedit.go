package lockedit

import (
	"context"
	"errors"
	"io/fs"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
)

// Locked edits (reference §2.7, §5.9-§5.13): shed_lockedit_open records a lock in the state
// database (zone key, path, user, conversation, time) and copies the file into the
// conversation's editzone, {space}/editzone/{conv}/{path}; overwrite/exec change only that
// working copy; save replaces the original atomically (and commits in versioned zones);
// cancel discards it. Working copies count against the zone owner's quota from their open
// to their save, cancel or expiry (core/workcopy.go).
//
// Holder = the (user, conversation) pair: conversations without a chat id share "unknown",
// so the user is checked too.

// LockeditPathArgs are the arguments shared by the locked-edit tools.
type LockeditPathArgs struct {
	core.ZoneArgs
	Path string `json:"path" required:"true"`
}

// requireHolder checks that the caller holds the lock on p: another user's lock is
// NOT_LOCK_OWNER, another conversation's FILE_LOCKED, no lock NOT_IN_EDIT_MODE (with a
// message saying the working copy was kept when one exists: the lock was broken by
// shed_force_unlock or shed_maintenance, and saving it now could overwrite newer work).
func (s *Tools) requireHolder(ctx context.Context, c core.Caller, z *core.Zone, ez *confine.Fs, p string) error {
	l, ok, err := s.EditLocks(z).Of(ctx, p)
	if err != nil {
		return core.LockErr(p, err)
	}
	switch {
	case ok && core.HeldBy(l, c):
		return nil
	case ok && l.UserID != c.UserID:
		return core.LockDetails(core.Errf(core.NotLockOwner, "You don't own this lock: %s", p).With("path", p).With("zone", z.Label), l, s.LockMaxAge())
	case ok:
		return s.FileLocked(z, p, l)
	}
	if _, err := ez.Stat(p); err == nil {
		return core.Errf(core.NotInEditMode, "The lock on %s was released (shed_lockedit(action='force_unlock') or shed_info(action='maintenance')); your working copy was kept but cannot be saved", p).
			With("path", p).With("zone", z.Label).With("working_copy_kept", true).
			WithHint("Call shed_lockedit(action='open') again (it copies the current file, discarding the kept working copy) or action 'cancel' to discard it")
	}
	return notInEditMode(z, p)
}

func notInEditMode(z *core.Zone, p string) *core.Error {
	return core.Errf(core.NotInEditMode, "File not open for editing: %s", p).With("path", p).With("zone", z.Label)
}

// workingCopy stats the caller's working copy without following a final symlink:
// NOT_IN_EDIT_MODE when it is missing or a folder, PATH_ESCAPE when it is a symlink (a
// command in the editzone may plant one to make the save copy another file).
func workingCopy(z *core.Zone, ez *confine.Fs, p string) (fs.FileInfo, error) {
	fi, _, err := ez.LstatIfPossible(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notInEditMode(z, p)
	}
	if err != nil {
		return nil, core.PathError(err, z, p)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, core.Errf(core.PathEscape, "The working copy of %s is a symbolic link: refused", p).With("path", p).With("zone", z.Label).
			WithHint("Call shed_lockedit(action='cancel'), then shed_lockedit(action='open') to start from the original again")
	}
	if !fi.Mode().IsRegular() {
		return nil, notInEditMode(z, p)
	}
	return fi, nil
}

// edit is one locked-edit step in progress: the zone, the caller's editzone, the clean path,
// and the per-file serialisation held until done.
type edit struct {
	z      *core.Zone
	ez     *confine.Fs
	p      string
	unlock func()
}

// beginEdit resolves the zone and path of a locked-edit tool, opens the caller's editzone
// and serialises the step on the file; call done when finished.
func (s *Tools) beginEdit(ctx context.Context, c core.Caller, in LockeditPathArgs) (*edit, error) {
	z, p, err := s.editPath(ctx, c, in)
	if err != nil {
		return nil, err
	}
	ez, err := s.Editzone(z, c.ConvID)
	if err != nil {
		z.Close()
		return nil, err
	}
	unlock, err := s.LockEdit(ctx, z, p)
	if err != nil {
		_ = ez.Close()
		z.Close()
		return nil, err
	}
	return &edit{z: z, ez: ez, p: p, unlock: unlock}, nil
}

// heldEdit is beginEdit for the steps that need the caller to hold the lock (overwrite,
// exec, save).
func (s *Tools) heldEdit(ctx context.Context, c core.Caller, in LockeditPathArgs) (*edit, error) {
	e, err := s.beginEdit(ctx, c, in)
	if err != nil {
		return nil, err
	}
	if err := s.requireHolder(ctx, c, e.z, e.ez, e.p); err != nil {
		e.done()
		return nil, err
	}
	return e, nil
}

func (e *edit) done() {
	e.unlock()
	_ = e.ez.Close()
	e.z.Close()
}

// editPath resolves the zone for writing and validates the path of a locked-edit tool.
func (s *Tools) editPath(ctx context.Context, c core.Caller, in LockeditPathArgs) (*core.Zone, string, error) {
	z, p, err := s.ZonePath(ctx, c, in.ZoneArgs, in.Path, true)
	if err != nil {
		return nil, "", err
	}
	if p == "" {
		z.Close()
		return nil, "", notAFile(z, in.Path)
	}
	return z, p, nil
}

// notAFile refuses a directory where a file is required.
func notAFile(z *core.Zone, p string) *core.Error {
	return core.Errf(core.NotAFile, "Cannot edit a directory: %s", p).With("path", p).With("zone", z.Label).
		WithHint("Locked edits work on one file: use shed_tree to find it")
}

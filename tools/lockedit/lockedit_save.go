package lockedit

import (
	"context"
	"io"
	"path"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"
)

// LockeditSaveInput is the input of shed_lockedit_save.
type LockeditSaveInput struct {
	LockeditPathArgs
	Message      string `json:"message,omitempty" doc:"Commit message"`
	ExpectedHash string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// LockeditSave answers shed_lockedit_save (reference §5.12): replace the original with the
// working copy atomically (growth reserved against the quota first), commit in versioned
// zones, then release the lock and remove the working copy. Refused unless the caller
// still holds the lock: after shed_force_unlock or expiry another conversation may have
// written the file, and the working copy is kept.
func (s *Tools) LockeditSave(ctx context.Context, c core.Caller, in LockeditSaveInput) (core.Result, error) {
	e, err := s.heldEdit(ctx, c, in.LockeditPathArgs)
	if err != nil {
		return core.Result{}, err
	}
	defer e.done()
	z, ez, p := e.z, e.ez, e.p
	wfi, err := workingCopy(z, ez, p)
	if err != nil {
		return core.Result{}, err
	}
	// The mode may have changed since the open (shed_group_set_mode): the transaction checks
	// it again.
	tx, t, err := s.BeginWrite(ctx, c, z, p, p, core.Edit{Tool: "shed_lockedit_save", Message: in.Message, Expect: in.ExpectedHash,
		Quota: &core.Quota{Plan: savePlan(wfi.Size())}})
	if e, ok := core.AsError(err); ok && e.Code == core.NotAFile {
		return core.Result{}, notAFile(z, p)
	}
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	old, files := oldOf(t)
	var written int64 = -1
	var contentHash string
	hash, err := tx.Apply(func() (core.Change, error) {
		// Re-checked now: a force-unlock since the first check wins.
		if err := s.requireHolder(ctx, c, z, ez, p); err != nil {
			return core.Change{}, err
		}
		src, err := ez.Open(p)
		if err != nil {
			return core.Change{}, notInEditMode(z, p)
		}
		defer src.Close()
		w := tx.Fs(z)
		if err := w.MakeDir(path.Dir(p)); err != nil {
			return core.Change{}, core.PathError(err, z, p)
		}
		sum := core.NewContentHash()
		n, err := w.WriteAtomic(p, io.TeeReader(src, sum), 0o600)
		if err != nil {
			return core.Change{}, core.PathError(err, z, p)
		}
		written, contentHash = n, sum.Sum()
		// The file is saved: its working copy goes, settled with the write.
		copied := core.RemoveWorkingCopy(ez, p)
		return core.Change{Paths: []string{p}, Growth: core.Amount{Bytes: n - old, Files: files}, Outside: core.Amount{Bytes: -copied}}, nil
	})
	if written < 0 {
		return core.Result{}, err
	}
	// The file is saved (its working copy removed): release even if the commit failed (err
	// says so).
	if rerr := s.EditLocks(z).Release(context.WithoutCancel(ctx), p, c.ConvID); rerr != nil {
		return core.Result{}, rerr
	}
	if err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: saved{Commit: hash, Committed: hash != "", Hash: contentHash, Path: p, Size: written, Versioned: z.Versioned, Zone: z.Name},
		Message: "Saved and unlocked: " + p}, nil
}

// saved is the answer of shed_lockedit save (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them; commit is written even when "").
type saved struct {
	Commit    string `json:"commit"`
	Committed bool   `json:"committed"`
	Hash      string `json:"hash"`
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Versioned bool   `json:"versioned"`
	Zone      string `json:"zone"`
}

// LockeditCancelInput is the input of shed_lockedit_cancel.
type LockeditCancelInput struct {
	LockeditPathArgs
}

// LockeditCancel answers shed_lockedit_cancel (reference §5.13): discard the working copy
// and release the lock. Only the holding conversation may cancel (the original let any
// conversation of the same user do it); a working copy kept after a force-unlock can be
// discarded this way too.
func (s *Tools) LockeditCancel(ctx context.Context, c core.Caller, in LockeditCancelInput) (core.Result, error) {
	e, err := s.beginEdit(ctx, c, in.LockeditPathArgs)
	if err != nil {
		return core.Result{}, err
	}
	defer e.done()
	z, ez, p := e.z, e.ez, e.p
	err = s.requireHolder(ctx, c, z, ez, p)
	if e, ok := core.AsError(err); ok && e.Code == core.NotInEditMode && e.Details["working_copy_kept"] == true {
		err = nil // discarding a kept working copy is what cancel is for
	}
	if err != nil {
		return core.Result{}, err
	}
	s.DropWorkingCopy(ctx, z, ez, p)
	if err := s.EditLocks(z).Release(ctx, p, c.ConvID); err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: cancelled{ChangesDiscarded: true, Path: p, Zone: z.Name},
		Message: "Edit cancelled, changes discarded: " + p}, nil
}

// cancelled is the answer of shed_lockedit cancel (fields in the order of the JSON keys,
// alphabetical).
type cancelled struct {
	ChangesDiscarded bool   `json:"changes_discarded"`
	Path             string `json:"path"`
	Zone             string `json:"zone"`
}

// ForceUnlockInput is the input of shed_force_unlock: zone or group, group first.
type ForceUnlockInput struct {
	Zone            string `json:"zone,omitempty" enum:"storage,documents,group" doc:"storage, documents or group"`
	Path            string `json:"path" required:"true"`
	Group           string `json:"group,omitempty" doc:"Group id or name (zone=group)"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a path whose first folder is named like the zone"`
}

// ForceUnlock answers shed_force_unlock (reference §5.34): anyone with access to the zone may
// break a lock (crash recovery), in group spaces within the limits of checkForceUnlock. Unlike the original, working copies are kept: the holder's
// later save is refused with a clear error, and shed_maintenance removes orphan copies.
func (s *Tools) ForceUnlock(ctx context.Context, c core.Caller, in ForceUnlockInput) (core.Result, error) {
	zone := strings.ToLower(strings.TrimSpace(in.Zone))
	switch {
	case in.Group != "":
		zone = "group"
	case zone == "":
		return core.Result{}, core.Errf(core.MissingParameter, "Must specify either 'zone' or 'group'").
			WithHint("Use zone='storage' or zone='documents', or group='group_id'")
	case zone != "storage" && zone != "documents":
		return core.Result{}, core.Errf(core.ZoneForbidden, "Invalid zone for shed_force_unlock: %s", in.Zone).With("zone", in.Zone).
			WithHint("Use zone='storage' or 'documents', or group='group_id' (uploads has no locks)")
	}
	z, p, err := s.editPath(ctx, c, LockeditPathArgs{ZoneArgs: core.ZoneArgs{Zone: zone, Group: in.Group, AllowZoneInPath: in.AllowZoneInPath}, Path: in.Path})
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	unlock, err := s.LockEdit(ctx, z, p)
	if err != nil {
		return core.Result{}, err
	}
	defer unlock()
	l, held, err := s.EditLocks(z).Of(ctx, p)
	if err != nil {
		return core.Result{}, core.LockErr(p, err)
	}
	if held {
		if err := s.checkForceUnlock(ctx, c, z, p, l); err != nil {
			return core.Result{}, err
		}
	}
	if err := s.EditLocks(z).ForceRelease(ctx, p); err != nil {
		return core.Result{}, err
	}
	data := unlocked{Path: p, Released: held, Zone: z.Name}
	if held {
		// The lock broken, as core.LockDetails describes it in FILE_LOCKED (without its expiry).
		since := l.Since.UTC().Format(time.RFC3339)
		data.LockedAt, data.LockedByConversation, data.Since = &since, &l.ConvID, &since
	}
	return core.Result{Data: data, Message: "Unlocked: " + p + " in " + z.Name}, nil
}

// unlocked is the answer of shed_force_unlock (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them): the lock's conversation and times
// only when a lock was released (then always, even "").
type unlocked struct {
	LockedAt             *string `json:"locked_at,omitempty"`
	LockedByConversation *string `json:"locked_by_conversation,omitempty"`
	Path                 string  `json:"path"`
	Released             bool    `json:"released"`
	Since                *string `json:"since,omitempty"`
	Zone                 string  `json:"zone"`
}

// oldOf is the size and the names of the file a save replaces: none when it was deleted
// meanwhile (saving makes it again).
func oldOf(t core.Target) (old, files int64) {
	if t.Exists {
		return t.Size, 0
	}
	return 0, 1
}

// savePlan is the quota a save of a working copy of size bytes needs, told from the file
// it replaces: the working copy leaves the editzone as the file takes its place, so the
// usage grows by the file's new size less its old one and less the copy's (quota.go
// counts both), that is by -old; a versioned zone reserves the new version's history too.
func savePlan(size int64) func(tx *core.Tx) (int64, core.Amount, error) {
	return func(tx *core.Tx) (int64, core.Amount, error) {
		old, files := oldOf(tx.Target(0))
		return size, core.Amount{Bytes: -old, Files: files}, nil
	}
}

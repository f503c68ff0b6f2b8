package core

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
)

// Group ownership (reference §2.10, §5): in group zones a file may have an owner and a mode.
//
//	group     every member writes, moves and deletes it
//	owner     only the owner writes, moves or deletes it (FILE_OWNER_ONLY, PERMISSION_DENIED)
//	owner_ro  nobody writes, moves or deletes it, not even its owner (FILE_READ_ONLY):
//	          "I publish and protect" (reference §2.10); the owner changes the mode first
//
// A file without a record (made by an archive tool, by a command while the default mode was
// 'group', or before groups were enforced) is open to every member. Every tool that writes into a zone calls checkGroupWrite before
// it touches a file and recordGroupFiles for the files it creates, so one place decides;
// outside group zones both are no-ops. The -wal, -journal and -shm of a database take the
// database's record (companions.go). shed_exec is checked after the fact by its guard
// (command_owned.go), its new files recorded by the same rule (recordOwners).
//
// The key of a record is the zone-relative path as confine.Clean makes it: "./a.md",
// "sub/../a.md", "a.md/" and the NFC or NFD spelling of a name are one key. Clean puts
// names in Unicode NFC and every tool creates files under that clean name, so the name on
// disk and the key agree; a name a command wrote in NFD is another file on Linux and has
// no record. Symlinks and symlinked folders are resolved to the file they reach before a
// write is checked, so a link cannot launder a protected file.
//
// Crash safety: records are written before the file they describe and removed after it is
// gone, and a record whose file does not exist is ignored (and dropped when met). A crash
// between the two steps therefore leaves at worst a record without a file, which never
// blocks anyone.

// The ownership modes.
const (
	modeOwner   = "owner"
	ModeGroup   = "group"
	modeOwnerRO = "owner_ro"
)

// writeKind says what a write does to a file, for the ownership rules.
type writeKind int

const (
	// WriteCreate makes a new file (or replaces a missing one).
	WriteCreate writeKind = iota
	// WriteModify changes or replaces the content of an existing file (through symlinks).
	WriteModify
	// WriteDelete removes a file or moves it away (a rename's source); a folder counts
	// for every file below it.
	WriteDelete
	// writeReplace replaces the directory entry itself (a rename's destination): a
	// symlink there is replaced, not followed.
	writeReplace
)

// GroupMode validates a mode argument; "" is the group_default_mode valve.
func (s *Service) GroupMode(mode string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(mode)); m {
	case "":
		return s.cfg.GroupDefaultMode, nil
	case modeOwner, ModeGroup, modeOwnerRO:
		return m, nil
	}
	return "", Errf(InvalidMode, "Invalid mode: %s", mode).With("mode", mode).With("valid", []string{modeOwner, ModeGroup, modeOwnerRO}).
		WithHint("Use 'owner', 'group', or 'owner_ro'")
}

// CheckGroupWrite refuses a write that the group ownership modes forbid (FILE_OWNER_ONLY,
// FILE_READ_ONLY, PERMISSION_DENIED). rel is zone-relative and clean; a folder counts for
// every file below it. nil outside group zones.
func (s *Service) CheckGroupWrite(ctx context.Context, c Caller, z *Zone, kind writeKind, rel string) error {
	if z.Kind != GroupZone || rel == "" {
		return nil
	}
	key := PhysicalRel(z, rel)
	if kind == WriteDelete || kind == writeReplace {
		key = entryRel(z, rel)
	}
	var recs []store.Ownership
	var err error
	switch kind {
	case WriteDelete:
		recs, err = s.db.OwnershipUnder(ctx, z.GroupID, key)
	default:
		var o store.Ownership
		var ok bool
		if o, ok, err = s.db.Ownership(ctx, z.GroupID, key); ok {
			recs = append(recs, o)
		}
	}
	if err != nil {
		return OwnershipErr(err)
	}
	for _, o := range recs {
		if !EntryExists(z, o.Path) {
			// A record left by a crash or by a command that moved the file: drop it.
			if err := s.db.DeleteOwnership(ctx, z.GroupID, o.Path); err != nil {
				return OwnershipErr(err)
			}
			continue
		}
		if e := refusal(c, o, kind); e != nil {
			return e.With("zone", z.Label)
		}
	}
	return s.checkCompanion(ctx, c, z, key) // companions.go
}

// Allowed reports whether c may do kind to the file of record o.
func Allowed(c Caller, o store.Ownership, kind writeKind) bool {
	switch o.Mode {
	case ModeGroup:
		return true
	case modeOwner:
		return o.Owner == c.UserID
	case modeOwnerRO:
		return false
	}
	return false
}

// refusal is the error refusing kind on the file of record o by c, nil when allowed.
func refusal(c Caller, o store.Ownership, kind writeKind) *Error {
	del := kind == WriteDelete
	switch {
	case Allowed(c, o, kind):
		return nil
	case o.Mode == modeOwner && del:
		return denied(o, FileOwnerOnly, "Cannot delete or move %s: only its owner may (mode owner)")
	case o.Mode == modeOwner:
		return Errf(FileOwnerOnly, "Cannot write to file: %s belongs to its owner (mode owner)", o.Path).
			With("path", o.Path).With("owner", o.Owner).With("mode", o.Mode)
	case o.Mode == modeOwnerRO && del:
		e := denied(o, FileReadOnly, "Cannot delete or move %s: it is read-only (mode owner_ro)")
		if o.Owner == c.UserID {
			e.WithHint("You own it: switch it to mode 'owner' with shed_group(action='set_mode'), then delete or move it")
		}
		return e
	case o.Mode == modeOwnerRO:
		e := Errf(FileReadOnly, "Cannot write to file: %s is read-only (mode owner_ro)", o.Path).
			With("path", o.Path).With("owner", o.Owner).With("mode", o.Mode)
		if o.Owner == c.UserID {
			e.WithHint("You own it: switch it to mode 'owner' with shed_group(action='set_mode'), then write")
		}
		return e
	}
	return denied(o, PermissionDenied, "Cannot write to %s: its ownership record has an unknown mode")
}

// denied is PERMISSION_DENIED for a delete or move, with the mode's reason.
func denied(o store.Ownership, reason Code, format string) *Error {
	return Errf(PermissionDenied, format, o.Path).With("path", o.Path).With("owner", o.Owner).
		With("mode", o.Mode).With("reason", string(reason))
}

// ChangeRecord changes the ownership record of rel (zone-relative, clean) in the group zone
// z for its owner c (shed_group set_mode, chown) and returns the record as it was. Why
// under the file's write lock: two changes, or a change and a write checking the mode,
// must not interleave; a set_mode that read the record before a chown wrote it would
// otherwise write the old owner back, and both would answer success. No record (or one
// whose file is gone) is FILE_NOT_FOUND, another owner NOT_FILE_OWNER ("Only the file owner
// can " + what); change may refuse with its own error, and nothing is written then.
func (s *Service) ChangeRecord(ctx context.Context, c Caller, z *Zone, rel, what string, change func(o *store.Ownership) error) (store.Ownership, error) {
	unlock, err := s.Hold(ctx, fileKey(z, rel), lock.Exclusive, "another change of "+rel)
	if err != nil {
		return store.Ownership{}, err
	}
	defer unlock()
	o, ok, err := s.db.Ownership(ctx, z.GroupID, rel)
	if err == nil && ok && !EntryExists(z, rel) {
		s.DropGroupRecords(ctx, z, rel)
		ok = false
	}
	switch {
	case err != nil:
		return o, OwnershipErr(err)
	case !ok:
		return o, Errf(FileNotFound, "No ownership record for: %s", rel).With("path", rel).With("zone", z.Label).
			WithHint("Only files created by the tools have an owner; see shed_group(action='info')")
	case o.Owner != c.UserID:
		return o, Errf(NotFileOwner, "Only the file owner can %s", what).With("path", rel).With("owner", o.Owner)
	}
	changed := o
	if err := change(&changed); err != nil {
		return o, err
	}
	if err := s.db.SetOwnership(ctx, changed); err != nil {
		return o, OwnershipErr(err)
	}
	return o, nil
}

// OwnershipErr wraps a state-database failure on ownership records.
func OwnershipErr(err error) *Error {
	return Errf(InternalError, "Cannot read or record file ownership").Because(err)
}

// EntryExists reports whether rel is an entry of the zone (a symlink counts, not followed).
func EntryExists(z *Zone, rel string) bool {
	_, _, err := z.fs.LstatIfPossible(rel)
	return err == nil
}

// PhysicalRel resolves the symlinks of rel (zone-relative, clean) to the zone-relative
// path of the file it reaches, for the ownership key; a missing tail is kept as written.
// A path whose resolution leaves the zone is returned unchanged (confinement refuses it).
func PhysicalRel(z *Zone, rel string) string {
	root, err := filepath.EvalSymlinks(z.fs.Dir())
	if err != nil {
		return rel
	}
	head, tail := rel, ""
	for head != "" {
		if r, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(head))); err == nil {
			inside, err := filepath.Rel(root, r)
			if err != nil || inside == ".." || strings.HasPrefix(inside, "../") {
				return rel
			}
			if inside == "." {
				inside = ""
			}
			return strings.TrimPrefix(path.Join(filepath.ToSlash(inside), tail), "/")
		}
		tail = path.Join(path.Base(head), tail)
		if head = path.Dir(head); head == "." {
			head = ""
		}
	}
	return rel
}

// entryRel is physicalRel for the folders of rel only: the entry a delete or a rename
// acts on (a final symlink is that entry, not followed; a symlinked folder above it is).
func entryRel(z *Zone, rel string) string {
	dir := path.Dir(rel)
	if dir == "." {
		return rel
	}
	return strings.TrimPrefix(path.Join(PhysicalRel(z, dir), path.Base(rel)), "/")
}

// RecordGroupFiles records c as the owner of files about to be created in a group zone,
// with mode ("" = group_default_mode). Call it before writing when possible: a record
// without its file is ignored, a file without a record is open to every member. A no-op
// outside group zones.
func (s *Service) RecordGroupFiles(ctx context.Context, c Caller, z *Zone, mode string, rels ...string) error {
	if z.Kind != GroupZone {
		return nil
	}
	keys := make([]string, 0, len(rels))
	for _, rel := range rels {
		if _, ok := CompanionOf(rel); !ok {
			keys = append(keys, PhysicalRel(z, rel))
		}
	}
	return s.recordOwners(ctx, c, z, mode, keys)
}

// recordOwners records c as the owner, with mode ("" = group_default_mode), of the entries
// keys of the group zone z, named as they are on disk (no link followed): the files a tool
// is about to create (RecordGroupFiles), the entries a command created (command_owned.go).
// A SQLite companion has no record of its own: it takes its database's.
func (s *Service) recordOwners(ctx context.Context, c Caller, z *Zone, mode string, keys []string) error {
	m, err := s.GroupMode(mode)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if _, ok := CompanionOf(key); ok {
			continue
		}
		if err := s.db.SetOwnership(ctx, store.Ownership{GroupID: z.GroupID, Path: key, Owner: c.UserID, Mode: m}); err != nil {
			return OwnershipErr(err)
		}
	}
	return nil
}

// DropGroupRecords removes the records of rel and of everything under it after the files
// are gone (a delete, or a failed create). Errors are ignored: a record without its file
// is ignored by every reader and dropped when met.
func (s *Service) DropGroupRecords(ctx context.Context, z *Zone, rel string) {
	if z.Kind == GroupZone && rel != "" {
		_ = s.db.DeleteOwnership(context.WithoutCancel(ctx), z.GroupID, entryRel(z, rel))
	}
}

// moveGroupRecords is the ownership side of a rename of from to to in a group zone: the
// records are copied before the move, and done(moved) removes the old ones after it (or
// the copies, restoring to's own record, when the move failed). A crash in between leaves
// records without files, which are ignored.
func (s *Service) moveGroupRecords(ctx context.Context, z *Zone, from, to string) (done func(moved bool), err error) {
	if z.Kind != GroupZone {
		return func(bool) {}, nil
	}
	from, to = entryRel(z, from), entryRel(z, to)
	old, hadOld, err := s.db.Ownership(ctx, z.GroupID, to)
	if err != nil {
		return nil, OwnershipErr(err)
	}
	if err := s.db.CopyOwnership(ctx, z.GroupID, from, to); err != nil {
		return nil, OwnershipErr(err)
	}
	return func(moved bool) {
		ctx := context.WithoutCancel(ctx)
		if moved {
			_ = s.db.DeleteOwnership(ctx, z.GroupID, from)
			return
		}
		_ = s.db.DeleteOwnership(ctx, z.GroupID, to)
		if hadOld {
			_ = s.db.SetOwnership(ctx, old)
		}
	}, nil
}

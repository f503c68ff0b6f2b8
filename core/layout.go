package core

import (
	"path/filepath"

	"github.com/fileshed/fileshed/core/store"
)

// The storage directory's tree (DESIGN §4), joined here and nowhere else (issue 35): the
// kernel, the families and the operator's commands ask the layout for a folder or a file
// of the storage, so that where a zone lives is decided once.
//
//	{base}/
//	  users/{user}/Uploads/{conv}/          a conversation's uploads (the zone root)
//	  users/{user}/Storage/{data,editzone/{conv}}/
//	  users/{user}/Documents/{data,editzone/{conv},repo.git}/
//	  users/{user}/journal/objects/        Storage's before-images (the change journal)
//	  groups/{group}/{data,editzone/{conv},repo.git}/
//	  fileshed.sqlite, fileshed.lock, .fileshed-running, .fileshed-clock, .fileshed-state,
//	  links.key, .plain/ (the working folder by default), .import-original/
//
// A space is the folder of one zone that holds its data, its editzones and, when it is
// versioned, its repository (Uploads has no data folder: each conversation is a root).
// Ids are checked (ValidID) by whoever accepts them; the layout only joins.

// Layout is the tree of one storage directory: a server's, a backup's, or the staging copy
// an import builds.
type Layout struct{ base string }

// LayoutOf is the layout of the storage directory base.
func LayoutOf(base string) Layout { return Layout{base: base} }

// Layout is the layout of the service's storage directory.
func (s *Service) Layout() Layout { return Layout{base: s.base} }

// Base is the storage directory itself.
func (l Layout) Base() string { return l.base }

// The file names directly in the storage directory.
const (
	stateFileName = "fileshed.sqlite"
	repoName      = "repo.git"
	clockName     = ".fileshed-clock" // written by replicas only
	linksKeyName  = "links.key"
	plainName     = ".plain"
	// importStagingName is the folder of ImportSwapMarker.
	importStagingName = ".import-original"
)

// StateFile is the SQLite state database.
func (l Layout) StateFile() string { return l.join(stateFileName) }

// StorageLock is the file whose flock keeps a server and an operator's exclusive work apart.
func (l Layout) StorageLock() string { return l.join(storageLockName) }

// RunningMarker exists while a server runs (sweep.go).
func (l Layout) RunningMarker() string { return l.join(runningMarker) }

// Clock is the replicas' shared clock file (replicas.go).
func (l Layout) Clock() string { return l.join(clockName) }

// StateRecord is the storage's record of its state database (state_record.go).
func (l Layout) StateRecord() string { return l.join(StateRecordName) }

// ImportSwap is the marker of an import-original swap in progress (import_marker.go).
func (l Layout) ImportSwap() string { return l.join(ImportSwapMarker) }

// ImportStaging is the staging storage an import-original builds, inside the storage
// (LayoutOf it is the layout of the storage it builds).
func (l Layout) ImportStaging() string { return l.join(importStagingName) }

// LinksKey is the generated secret of the links when links.secret is not set.
func (l Layout) LinksKey() string { return l.join(linksKeyName) }

// Plain is the default working folder (encryption.work_dir unset).
func (l Layout) Plain() string { return l.join(plainName) }

// StateFiles are the SQLite state database and its companions (its write-ahead log and its
// shared memory), which belong together.
func (l Layout) StateFiles() []string {
	f := l.StateFile()
	return []string{f, f + "-wal", f + "-shm"}
}

// Top is name directly in the storage directory (a name of the root's listing, such as
// the backup's manifest or a state database's companion file); name is a single segment.
func (l Layout) Top(name string) string { return l.join(name) }

// Owners is the folder of every user ("user") or group ("group").
func (l Layout) Owners(kind string) string { return l.join(kind + "s") }

// User is the folder of one user, which holds the user's three zones.
func (l Layout) User(id string) string { return l.join("users", id) }

// Uploads is the folder of a user's uploads: one folder per conversation.
func (l Layout) Uploads(user string) string { return l.join("users", user, "Uploads") }

// UploadsOf is the uploads of one conversation: the root of its Uploads zone.
func (l Layout) UploadsOf(user, conv string) string {
	return l.join("users", user, "Uploads", conv)
}

// StorageSpace is the space of a user's Storage zone.
func (l Layout) StorageSpace(user string) string { return l.join("users", user, "Storage") }

// JournalArea is the folder of a user's journal before-images (journal_image.go): beside
// the user's zones, in none of them, counted apart from the quota.
func (l Layout) JournalArea(user string) string { return l.join("users", user, "journal") }

// DocumentsSpace is the space of a user's Documents zone.
func (l Layout) DocumentsSpace(user string) string { return l.join("users", user, "Documents") }

// GroupSpace is the space of a group's zone.
func (l Layout) GroupSpace(group string) string { return l.join("groups", group) }

// VersionedSpace is o's versioned space: a user's Documents, a group's zone.
func (l Layout) VersionedSpace(o store.Owner) string {
	if o.Kind == "group" {
		return l.GroupSpace(o.ID)
	}
	return l.DocumentsSpace(o.ID)
}

// ZoneRoot is the data folder of a zone kind of owner o (a user's, or a group's for
// GroupZone); for Uploads, the folder of every conversation (UploadsOf is one's root).
func (l Layout) ZoneRoot(o store.Owner, kind ZoneKind) string {
	switch kind {
	case Uploads:
		return l.Uploads(o.ID)
	case Storage:
		return DataDir(l.StorageSpace(o.ID))
	case Documents:
		return DataDir(l.DocumentsSpace(o.ID))
	}
	return DataDir(l.GroupSpace(o.ID))
}

func (l Layout) join(elem ...string) string {
	return filepath.Join(append([]string{l.base}, elem...)...)
}

// DataDir is the data folder of a space: the zone root its tools see.
func DataDir(space string) string { return filepath.Join(space, "data") }

// RepoDir is the repository of a versioned space, beside its data (never inside: a
// command could write a .git/config there).
func RepoDir(space string) string { return filepath.Join(space, repoName) }

// EditzonesDir is the folder of a space's editzones, one per conversation.
func EditzonesDir(space string) string { return filepath.Join(space, "editzone") }

// EditzoneDir is the editzone of one conversation in a space.
func EditzoneDir(space, conv string) string { return filepath.Join(space, "editzone", conv) }

// SpaceEntry is name directly in a space (a folder a command's guard keeps beside the
// data); name is a single segment.
func SpaceEntry(space, name string) string { return filepath.Join(space, name) }

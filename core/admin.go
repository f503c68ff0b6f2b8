package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// The operator's side of the service (`fileshed admin`): what an administrator needs to see
// and repair, on the storage directory directly, while a server runs on it or not. A serving
// process holds the storage lock (New): exclusively with the SQLite state (one server), shared
// with the PostgreSQL state (replicas); commands that must not race a live server (quota
// reconcile, restore) take it exclusively, and the others read beside a running server
// without it.

// ErrServerRunning reports that a server holds the storage directory.
var ErrServerRunning = errors.New("a fileshed server is running on this storage directory (stop it first)")

// ErrStorageInUse reports that a server could not take the storage directory: another
// server or an operator holds it.
var ErrStorageInUse = errors.New("storage directory in use")

// storageLockName is the file whose flock keeps a server and an operator's exclusive work
// apart; its content names the holder (lockHolder), for the refusal's message.
const storageLockName = "fileshed.lock"

// lockHolder is who takes the storage lock: what the file says while it is held.
type lockHolder string

const (
	// holderServer is a server with the SQLite state: alone on the storage.
	holderServer lockHolder = "server"
	// holderReplica is a server with the PostgreSQL state: beside other replicas, which
	// share its state and its locks, and nobody else.
	holderReplica  lockHolder = "replica"
	holderOperator lockHolder = "operator"
)

// StorageLock is a held storage lock (lockStorage): Close releases it.
type StorageLock struct{ f *os.File }

// Close releases the lock at once, then closes its file. Why unlock first: the flock
// belongs to the open file description, which a child of this process shares from its fork
// until its exec; closing the file alone leaves the lock held through that window, and the
// next server or operator on the storage is refused (TestStorageLockReleasedBesideForks).
func (l *StorageLock) Close() {
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
}

// lockStorage takes the storage lock of base without waiting, shared for a replica and
// exclusively for the others; the returned lock holds it until closed. When someone else
// holds it, an operator gets ErrServerRunning and a server gets ErrStorageInUse with a
// message naming the directory, the holder and the way to run several servers.
func lockStorage(base string, who lockHolder) (*StorageLock, error) {
	f, err := os.OpenFile(LayoutOf(base).StorageLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if who == holderReplica {
		how = unix.LOCK_SH
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		held, _ := io.ReadAll(io.LimitReader(f, 200))
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, err
		}
		return nil, storageInUse(base, who, strings.TrimSpace(string(held)))
	}
	// Why write the holder: the flock alone cannot tell a second server whether a server or
	// an operator is in the way, and the two need different advice.
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("%s pid %d on %s\n", who, os.Getpid(), host)), 0)
	}
	return &StorageLock{f}, nil
}

// storageInUse is the refusal of who, whom held (the lock file's line) keeps out of base.
func storageInUse(base string, who lockHolder, held string) error {
	switch {
	case who == holderOperator:
		return ErrServerRunning
	case strings.HasPrefix(held, string(holderOperator)):
		return fmt.Errorf("%w: an operator holds %s (fileshed admin restore, import-original or quota reconcile): start the server when it is done", ErrStorageInUse, base)
	case strings.HasPrefix(held, string(holderReplica)):
		return fmt.Errorf("%w: fileshed replicas with state.driver: postgres serve %s (%s); a server with the embedded SQLite "+
			"state cannot join them: give it the same state.driver: postgres and state.url", ErrStorageInUse, base, held)
	case who == holderReplica:
		return fmt.Errorf("%w: a fileshed server with the embedded SQLite state serves %s (%s): stop it first; "+
			"replicas (state.driver: postgres) share a storage only with each other", ErrStorageInUse, base, held)
	}
	return fmt.Errorf("%w: another fileshed server already serves %s (%s); one server per storage directory "+
		"with the embedded SQLite state. To run several replicas on one storage, use state.driver: postgres "+
		"(README, \"Several replicas\")", ErrStorageInUse, base, held)
}

// LockForOperator takes the storage lock of base for an operator's exclusive work that
// lives outside core (fileshed admin import-original): ErrServerRunning while a server runs
// on base, and a server started meanwhile refuses to start. Close it to release it.
func LockForOperator(base string) (*StorageLock, error) { return lockStorage(base, holderOperator) }

// HoldsData reports whether the storage directory base holds zones or a state database:
// the check restore and import-original make before they replace anything without --force.
func HoldsData(base string) bool { return hasData(base) }

// OwnerReport is one owner's recorded usage, its limit and (Verify) what the disk holds, in
// bytes and in names (files, folders, links).
type OwnerReport struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Used        int64  `json:"used_bytes"`
	Limit       int64  `json:"limit_bytes"`
	OnDisk      int64  `json:"on_disk_bytes,omitempty"`
	UsedFiles   int64  `json:"used_files"`
	LimitFiles  int64  `json:"limit_files"`
	OnDiskFiles int64  `json:"on_disk_files,omitempty"`
	// Unmeasured is what the walk could not read ("zone/path: cause"); a reconcile then
	// keeps the recorded usage.
	Unmeasured []string `json:"unmeasured,omitempty"`
}

// ownerReport is o's line with its recorded usage used.
func (s *Service) ownerReport(o store.Owner, used Amount) OwnerReport {
	l := s.Limit(o)
	return OwnerReport{Kind: o.Kind, ID: o.ID, Used: used.Bytes, Limit: l.Bytes, UsedFiles: used.Files, LimitFiles: l.Files}
}

// AdminUsage lists every owner's recorded usage and limit.
func (s *Service) AdminUsage(ctx context.Context) ([]OwnerReport, error) {
	us, err := s.db.Usages(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]OwnerReport, 0, len(us))
	for _, u := range us {
		out = append(out, s.ownerReport(u.Owner, u.Used))
	}
	return out, nil
}

// AdminReconcile measures owners on disk and records it (all owners on disk when ids is
// empty). It refuses while a server runs on the storage: the server's locks alone keep a
// measurement from erasing a write in flight (shed_maintenance reconciles online).
func (s *Service) AdminReconcile(ctx context.Context, kind string, ids ...string) ([]OwnerReport, error) {
	l, err := lockStorage(s.base, holderOperator)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	owners, err := s.owners(kind, ids)
	if err != nil {
		return nil, err
	}
	var out []OwnerReport
	for _, o := range owners {
		used, unmeasured, err := s.Reconcile(ctx, o)
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", o.Kind, o.ID, err)
		}
		r := s.ownerReport(o, used)
		r.Unmeasured = unmeasured
		out = append(out, r)
	}
	return out, nil
}

// owners are the given ids of kind ("user" or "group"), or every owner with a directory.
func (s *Service) owners(kind string, ids []string) ([]store.Owner, error) {
	var out []store.Owner
	kinds := []string{"user", "group"}
	if kind != "" {
		kinds = []string{kind}
	}
	for _, k := range kinds {
		if k != "user" && k != "group" {
			return nil, fmt.Errorf("owner kind %q is not user or group", k)
		}
		list := ids
		if len(list) == 0 {
			entries, _ := os.ReadDir(s.Layout().Owners(k))
			for _, e := range entries {
				if e.IsDir() && ValidID(e.Name()) {
					list = append(list, e.Name())
				}
			}
		}
		for _, id := range list {
			if !ValidID(id) {
				return nil, fmt.Errorf("invalid %s id %q", k, id)
			}
			out = append(out, store.Owner{Kind: k, ID: id})
		}
	}
	return out, nil
}

// AdminLocks lists every locked edit.
func (s *Service) AdminLocks(ctx context.Context) ([]store.Lock, error) { return s.db.AllLocks(ctx) }

// AdminReleaseLock breaks the lock on path in zoneKey (as listed by AdminLocks); the
// holder's save is then refused, as after shed_force_unlock.
func (s *Service) AdminReleaseLock(ctx context.Context, zoneKey, path string) error {
	if _, ok, err := s.db.LockOf(ctx, zoneKey, path); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("no lock on %s in %s", path, zoneKey)
	}
	return s.db.ForceReleaseLock(ctx, zoneKey, path)
}

// AdminExportAudit writes the selected audit entries as JSON lines.
func (s *Service) AdminExportAudit(ctx context.Context, f store.AuditFilter, w io.Writer) (int, error) {
	return s.db.ExportAudit(ctx, f, w)
}

// AdminPruneAudit deletes audit entries older than before.
func (s *Service) AdminPruneAudit(ctx context.Context, before time.Time) (int64, error) {
	return s.db.PruneAudit(ctx, before)
}

// ListEntry is one entry of an administrator's look into a zone.
type ListEntry struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"` // file, dir, link or other
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modified"`
}

// AdminList lists the folder rel of a user's zone (uploads, storage, documents) or of a
// group's space (zone "group"), read-only, through the same confinement as the tools.
func (s *Service) AdminList(kind, id, zone, rel string) ([]ListEntry, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("invalid id %q", id)
	}
	var dir string
	l, o := s.Layout(), store.Owner{Kind: kind, ID: id}
	switch {
	case kind == "group":
		dir = l.ZoneRoot(o, GroupZone)
	case zone == "uploads":
		dir = l.ZoneRoot(o, Uploads)
	case zone == "storage", zone == "":
		dir = l.ZoneRoot(o, Storage)
	case zone == "documents":
		dir = l.ZoneRoot(o, Documents)
	default:
		return nil, fmt.Errorf("zone %q is not uploads, storage or documents", zone)
	}
	zfs, err := confine.New(dir)
	if err != nil {
		return nil, fmt.Errorf("no such zone: %w", errors.Unwrap(err))
	}
	defer zfs.Close()
	clean, err := confine.Clean(rel)
	if err != nil {
		return nil, err
	}
	f, err := zfs.Open(clean)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	infos, err := f.Readdir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]ListEntry, 0, len(infos))
	for _, fi := range infos {
		e := ListEntry{Name: fi.Name(), Size: fi.Size(), ModTime: fi.ModTime(), Type: "other"}
		switch m := fi.Mode(); {
		case m.IsRegular():
			e.Type = "file"
		case m.IsDir():
			e.Type = "dir"
		case m&os.ModeSymlink != 0:
			e.Type = "link"
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// VerifyReport is what AdminVerify found.
type VerifyReport struct {
	Database     string            `json:"database"`
	Repositories map[string]string `json:"repositories"`
	Quota        []OwnerReport     `json:"quota"`
	// EncryptionKeys counts the users whose data key the configured master key cannot
	// unwrap (encryption.master_key missing or not the original).
	EncryptionKeys int `json:"encryption_keys_not_unwrappable"`
	// Protected lists, per versioned zone, the protected names it holds (a .git in any
	// spelling): no tool can delete them, and every download of their folder carries them.
	Protected map[string][]string `json:"protected_paths,omitempty"`
	// JournalImages lists, per user, the before-images of the change journal that are
	// missing or do not hold what their name says (at most maxJournalShown each; every one
	// is counted in Problems): their changes cannot be undone.
	JournalImages map[string][]string `json:"journal_images,omitempty"`
	Problems      int                 `json:"problems"`
}

// AdminVerify checks the state database's integrity, every repository, every user's journal
// images, and every owner's recorded usage against the disk (reported, not changed).
func (s *Service) AdminVerify(ctx context.Context) (VerifyReport, error) {
	rep := VerifyReport{Database: "ok", Repositories: map[string]string{}}
	if err := s.db.IntegrityCheck(ctx); err != nil {
		rep.Database, rep.Problems = err.Error(), rep.Problems+1
	}
	if n, err := s.EncryptionMismatch(ctx); err == nil && n > 0 {
		rep.EncryptionKeys, rep.Problems = n, rep.Problems+1
	}
	owners, err := s.owners("", nil)
	if err != nil {
		return rep, err
	}
	for _, o := range owners {
		space, z := s.Layout().VersionedSpace(o), &Zone{Kind: GroupZone, GroupID: o.ID}
		name := "group " + o.ID
		if o.Kind == "user" {
			z = &Zone{Kind: Documents, Owner: o}
			name = "user " + o.ID + " documents"
		}
		if _, err := os.Stat(RepoDir(space)); err == nil {
			rep.Repositories[name] = s.verifyRepo(ctx, space, z)
			if rep.Repositories[name] != "ok" {
				rep.Problems++
			}
		}
		found, err := protectedIn(ctx, space, z)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", name, err)
		}
		if len(found) > 0 {
			if rep.Protected == nil {
				rep.Protected = map[string][]string{}
			}
			rep.Protected[name], rep.Problems = found, rep.Problems+1
		}
		bad, shown, err := s.verifyJournal(ctx, o)
		if err != nil {
			return rep, fmt.Errorf("%s %s: journal: %w", o.Kind, o.ID, err)
		}
		if bad > 0 {
			if rep.JournalImages == nil {
				rep.JournalImages = map[string][]string{}
			}
			rep.JournalImages["user "+o.ID], rep.Problems = shown, rep.Problems+bad
		}
		used, err := s.db.Usage(ctx, o)
		if err != nil {
			return rep, err
		}
		disk, unmeasured, err := s.measureOwner(ctx, o)
		if err != nil {
			return rep, fmt.Errorf("%s %s: %w", o.Kind, o.ID, err)
		}
		if disk != used || len(unmeasured) > 0 {
			rep.Problems++
		}
		r := s.ownerReport(o, used)
		r.OnDisk, r.OnDiskFiles, r.Unmeasured = disk.Bytes, disk.Files, unmeasured
		rep.Quota = append(rep.Quota, r)
	}
	return rep, nil
}

// verifyRepo verifies one repository, that of z in space, without keeping it open: "ok"
// or the problem (every object reachable from a branch or tag is read). What a writer that died left (lock files, an index behind HEAD) is
// recovered first, under the repository's key as every writer holds it (vcs.Locked.Recover).
func (s *Service) verifyRepo(ctx context.Context, space string, z *Zone) string {
	r, err := vcs.Open(RepoDir(space), DataDir(space))
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	release, err := s.Hold(ctx, spaceKey(kindRepo, z), lock.Exclusive, "the repository")
	if err != nil {
		return err.Error()
	}
	defer release()
	l, err := r.Lock()
	if err != nil {
		return err.Error()
	}
	_, err = l.Recover()
	l.Unlock()
	if err == nil {
		err = r.Verify()
	}
	if err == nil { // every version shed_version may read, not only HEAD's
		_, err = r.CheckReachable()
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

// AdminLinks lists the links of user ("" = everyone), newest first, for `fileshed admin
// links list`.
func (s *Service) AdminLinks(ctx context.Context, user string) ([]store.Link, error) {
	return s.db.LinksOf(ctx, user)
}

// AdminRevokeLink revokes any user's link at once (`fileshed admin links revoke`).
func (s *Service) AdminRevokeLink(ctx context.Context, id string) (store.Link, error) {
	l, err := s.db.RevokeLink(ctx, id, "", time.Now())
	if errors.Is(err, store.ErrNoLink) {
		return store.Link{}, fmt.Errorf("no link with id %q", id)
	}
	return l, err
}

package core

import (
	"context"
	"errors"
	"maps"
	"path"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// The ownership guard of group zones (command_guard.go). A command can do anything the whitelist allows to
// the files of the zone (mv, rm -r, sed -i, tar -x, ln -sf, truncate, gzip...), so instead
// of a list of forbidden verbs the guard looks at the result: before the command it notes
// the identity of every file with an ownership record (device, inode, size, mode, link
// count, modification and change times: the kernel updates the change time on every write,
// truncate, chmod, link or rename, and a user cannot set it); after the command, under the
// same repository lock and before the commit, every protected file that the caller was not
// allowed to change and that is no longer the same entry at the same place (modified,
// deleted, moved away, replaced by a link or a folder, hard-linked, reached through a
// folder that was renamed or replaced by a link) is written back from HEAD, so the commit
// does not contain that change. The answer lists them in data.reverted. Records of files
// the caller was allowed to delete and that are gone are dropped. The command runs without
// the gate (command_space.go): a file another member wrote beside it (beside.go) is judged
// against that write (its identity then, its commit to put back), and a protected file
// created beside it is guarded too. The recovery's guard (deadOwned) noted nothing before
// the command: it judges each file against HEAD (sameAsHead).

// ownedGuard is the snapshot of a group zone's recorded files taken before a command, or
// the recovery's list of them (deadOwned).
type ownedGuard struct {
	s     *Service
	ctx   context.Context
	c     Caller
	z     *Zone
	files []guarded
	// beside notes the writes of other members during the command.
	beside *BesideRun
	// companions are the SQLite companions of the databases the caller may not write
	// (companions.go).
	companions []guardedCompanion
}

// guarded is one recorded file and what the caller may do to it.
type guarded struct {
	rec                 store.Ownership
	st                  unix.Stat_t
	mayWrite, mayDelete bool
	// from is the version to put it back to (HEAD's unless another member wrote it
	// beside the command); contested says the command changed it while that write was
	// committed, so st is not known.
	from      Version
	contested bool
	// unknown says that nothing was noted before the command (a recovery's guard): the
	// file is judged against HEAD.
	unknown bool
}

// guardOwned snapshots the recorded files of a group zone before a command (nil outside
// group zones). Records whose file is already gone are dropped here.
func (s *Service) guardOwned(ctx context.Context, c Caller, z *Zone) (*ownedGuard, error) {
	if z.Kind != GroupZone {
		return nil, nil
	}
	recs, err := s.db.OwnershipUnder(ctx, z.GroupID, "")
	if err != nil {
		return nil, OwnershipErr(err)
	}
	st, err := NewStatter(z)
	if err != nil {
		return nil, Errf(InternalError, "Cannot open the %s zone", z.Name).Because(err)
	}
	defer st.Close()
	g := &ownedGuard{s: s, ctx: ctx, c: c, z: z}
	for _, o := range recs {
		info, ok := st.Lstat(o.Path)
		if !ok {
			s.DropGroupRecords(ctx, z, o.Path)
			continue
		}
		g.files = append(g.files, guarded{rec: o, st: info,
			mayWrite: Allowed(c, o, WriteModify), mayDelete: Allowed(c, o, WriteDelete)})
		g.noteCompanions(st, g.files[len(g.files)-1])
	}
	return g, nil
}

// deadOwned is the ownership guard of the recovery of dead commands whose callers are
// callers (nil outside group zones): the recorded files one of them was not allowed to
// change, and their companions, each judged against HEAD.
func (s *Service) deadOwned(ctx context.Context, z *Zone, callers []Caller) (*ownedGuard, error) {
	if z.Kind != GroupZone {
		return nil, nil
	}
	recs, err := s.db.OwnershipUnder(ctx, z.GroupID, "")
	if err != nil {
		return nil, OwnershipErr(err)
	}
	g := &ownedGuard{s: s, ctx: ctx, z: z}
	for _, o := range recs {
		if slices.ContainsFunc(callers, func(c Caller) bool { return !Allowed(c, o, WriteModify) }) {
			g.files = append(g.files, guarded{rec: o, unknown: true})
			for _, j := range Journals {
				g.companions = append(g.companions, guardedCompanion{rel: o.Path + j, rec: o, unknown: true})
			}
		}
	}
	return g, nil
}

// recordCreated gives the files the command created an owner, the caller, with
// group_default_mode, by the write transaction's rule (recordOwners, as the tools' files
// get theirs: 'group' is recorded too, a companion gets none; each entry under its own
// name, a link not followed), so that a command creates files like the tools do; before its commit,
// so also when the commit fails (a lock lost with its database session: LOCK_ERROR), since
// the files then stay on disk, uncommitted until shed_maintenance commits them, and without
// a record every member could replace or delete them. Created: absent from the zone before
// the command (before), present after its guards (after), not written beside it by another
// member. Errors leave files without a record (open to every member), as before groups
// existed: the command already ran.
func (g *ownedGuard) recordCreated(before, after Snapshot) {
	if g == nil {
		return
	}
	beside := g.beside.Paths()
	var created []string
	for _, p := range slices.Sorted(maps.Keys(after.Entries)) {
		if _, existed := before.Entries[p]; existed || after.Entries[p].Dir || slices.Contains(beside, p) {
			continue
		}
		created = append(created, p)
	}
	_ = g.s.recordOwners(context.WithoutCancel(g.ctx), g.c, g.z, "", created)
}

// restore puts back, from HEAD (or the commit of a write beside the command), every
// protected file the command changed and the caller was not allowed to change, and returns
// them as data.reverted entries, with the first file it could not put back.
func (g *ownedGuard) restore(l *vcs.Locked) ([]RevertedFile, error) {
	var reverted []RevertedFile
	dirs := map[string]bool{} // ancestor -> still a real folder
	if err := g.besides(); err != nil {
		return nil, err
	}
	st, err := NewStatter(g.z)
	if err != nil {
		return nil, Errf(InternalError, "Cannot open the %s zone", g.z.Name).Because(err)
	}
	defer st.Close()
	var firstErr error
	for _, f := range g.files {
		reason := g.check(l, st, f, dirs)
		if reason == "" {
			continue
		}
		err := putBack(l, g.z.fs, f.rec.Path, f.from)
		if errors.Is(err, errNoVersion) && f.from.Fixed {
			err = g.z.fs.RemoveAll(f.rec.Path) // created beside the command, and contested: no version to trust
		}
		if err != nil {
			if firstErr == nil {
				firstErr = notRestored(f.rec.Path, err)
			}
			continue
		}
		reverted = append(reverted, RevertedFile{Mode: f.rec.Mode, Owner: f.rec.Owner, Path: f.rec.Path, Reason: reason})
	}
	r, err := g.restoreCompanions(l, st)
	if err != nil && firstErr == nil {
		firstErr = err
	}
	return append(reverted, r...), firstErr
}

// check says why f must be restored ("" = unchanged, or a change the caller may make; a
// record of a file the caller was allowed to delete and that is gone is dropped). A file
// noted unknown is put back when it differs from HEAD.
func (g *ownedGuard) check(l *vcs.Locked, sr *Statter, f guarded, dirs map[string]bool) string {
	if f.unknown {
		if same, err := sameAsHead(l, g.z, f.rec.Path); err != nil || same {
			return "" // not in HEAD (nothing to put back), or unchanged
		}
		return "changed by a command interrupted by an unclean stop"
	}
	folderOK := realDirs(g.z, path.Dir(f.rec.Path), dirs)
	st, ok := sr.Lstat(f.rec.Path)
	switch {
	case !folderOK && f.mayDelete:
		g.s.DropGroupRecords(g.ctx, g.z, f.rec.Path)
		return ""
	case !folderOK:
		return "its folder was moved, removed or replaced by a link"
	case !ok && f.mayDelete:
		g.s.DropGroupRecords(g.ctx, g.z, f.rec.Path)
		return ""
	case !ok:
		return "deleted or moved away"
	case f.mayWrite, !f.contested && SameEntry(st, f.st):
		return ""
	case f.contested:
		return "changed while another member was writing it"
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return "replaced by a link"
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "replaced by a folder or special file"
	case st.Ino != f.st.Ino || st.Dev != f.st.Dev:
		return "replaced"
	case st.Nlink != f.st.Nlink:
		return "hard-linked"
	case st.Mode != f.st.Mode:
		return "permissions changed"
	}
	return "modified"
}

// realDirs reports whether dir and each of its ancestors is a real folder (not a link,
// not missing), memoised in seen.
func realDirs(z *Zone, dir string, seen map[string]bool) bool {
	if dir == "." || dir == "" {
		return true
	}
	if ok, known := seen[dir]; known {
		return ok
	}
	ok := realDirs(z, path.Dir(dir), seen)
	if ok {
		fi, _, err := z.fs.LstatIfPossible(dir)
		ok = err == nil && fi.IsDir()
	}
	seen[dir] = ok
	return ok
}

// besides brings in the writes of other members beside the command: the file as each left
// it replaces the one before the command, and a recorded file created beside it is guarded
// as well.
func (g *ownedGuard) besides() error {
	if g.beside == nil {
		return nil
	}
	at := map[string]int{}
	for i, f := range g.files {
		at[f.rec.Path] = i
	}
	for _, p := range slices.Sorted(maps.Keys(g.beside.Writes)) {
		w := g.beside.Writes[p]
		i, ok := at[p]
		if !ok {
			rec, found, err := g.s.db.Ownership(g.ctx, g.z.GroupID, p)
			if err != nil {
				return OwnershipErr(err)
			}
			if !found {
				continue // open to every member
			}
			g.files = append(g.files, guarded{rec: rec, mayWrite: Allowed(g.c, rec, WriteModify), mayDelete: Allowed(g.c, rec, WriteDelete)})
			i = len(g.files) - 1
		}
		g.files[i].st, g.files[i].from, g.files[i].contested = w.St, w.Version(), w.Contested
	}
	return nil
}

// guardedCompanion is a companion of a protected database as it was before a command.
type guardedCompanion struct {
	rel     string
	rec     store.Ownership
	st      unix.Stat_t
	existed bool
	// unknown: the recovery's, judged against HEAD.
	unknown bool
}

// noteCompanions records, before a command, the companions of f's database when the
// caller may not write it.
func (g *ownedGuard) noteCompanions(st *Statter, f guarded) {
	if f.mayWrite {
		return
	}
	for _, j := range Journals {
		info, ok := st.Lstat(f.rec.Path + j)
		g.companions = append(g.companions, guardedCompanion{rel: f.rec.Path + j, rec: f.rec, st: info, existed: ok})
	}
}

// restoreCompanions removes, after a command, every companion of a protected database that
// the command created or changed (one it deleted is what the next open would remove; the
// recovery's: every one that differs from HEAD), and returns them as data.reverted entries.
func (g *ownedGuard) restoreCompanions(l *vcs.Locked, st *Statter) ([]RevertedFile, error) {
	var reverted []RevertedFile
	for _, cp := range g.companions {
		now, ok := st.Lstat(cp.rel)
		if !ok || (cp.existed && SameEntry(now, cp.st)) {
			continue
		}
		if cp.unknown {
			if same, _ := sameAsHead(l, g.z, cp.rel); same {
				continue
			}
		}
		if err := g.z.fs.RemoveAll(cp.rel); err != nil {
			return reverted, Errf(ExecutionError, "A file the command wrote beside the protected database %s could not be removed: %s", cp.rec.Path, cp.rel).
				With("path", cp.rel).Because(err).WithHint("Run shed_info(action='maintenance'), then retry")
		}
		reason := "created beside the protected SQLite database " + cp.rec.Path
		if cp.existed {
			reason = "changed beside the protected SQLite database " + cp.rec.Path
		}
		reverted = append(reverted, RevertedFile{Mode: cp.rec.Mode, Owner: cp.rec.Owner, Path: cp.rel, Reason: reason})
	}
	return reverted, nil
}

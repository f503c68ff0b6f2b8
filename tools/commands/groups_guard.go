package commands

import (
	"context"
	"errors"
	"maps"
	"path"
	"slices"

	"github.com/fileshed/fileshed/core"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// The shed_exec guard of group zones. A command can do anything the whitelist allows to
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
// the gate (exec_write.go): a file another member wrote beside it (core/beside.go) is judged
// against that write (its identity then, its commit to put back), and a protected file
// created beside it is guarded too.

// execGuard is the snapshot of a group zone's recorded files taken before a command.
type execGuard struct {
	s     *Tools
	ctx   context.Context
	c     core.Caller
	z     *core.Zone
	files []guarded
	// beside notes the writes of other members during the command.
	beside *core.BesideRun
	// companions are the SQLite companions of the databases the caller may not write
	// (sqlite_companions.go).
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
	from      core.Version
	contested bool
}

// guardExec snapshots the recorded files of a group zone before a command (nil outside
// group zones). Records whose file is already gone are dropped here.
func (s *Tools) guardExec(ctx context.Context, c core.Caller, z *core.Zone) (*execGuard, error) {
	if z.Kind != core.GroupZone {
		return nil, nil
	}
	recs, err := s.DB().OwnershipUnder(ctx, z.GroupID, "")
	if err != nil {
		return nil, core.OwnershipErr(err)
	}
	st, err := core.NewStatter(z)
	if err != nil {
		return nil, core.Errf(core.InternalError, "Cannot open the %s zone", z.Name).Because(err)
	}
	defer st.Close()
	g := &execGuard{s: s, ctx: ctx, c: c, z: z}
	for _, o := range recs {
		info, ok := st.Lstat(o.Path)
		if !ok {
			s.DropGroupRecords(ctx, z, o.Path)
			continue
		}
		g.files = append(g.files, guarded{rec: o, st: info,
			mayWrite: core.Allowed(c, o, core.WriteModify), mayDelete: core.Allowed(c, o, core.WriteDelete)})
		g.noteCompanions(st, g.files[len(g.files)-1])
	}
	return g, nil
}

// change adds the guard to the command's change (the change itself outside group zones).
func (g *execGuard) change(ch core.Change, data *ExecData) core.Change {
	if g == nil {
		return ch
	}
	ch.BeforeCommit = func(l *vcs.Locked) error { return g.restore(l, data) }
	return ch
}

// recordCreated gives the files the command created an owner, the caller, with
// group_default_mode (nothing to record with 'group'), so that a command creates files like
// the tools do; after its commit, and also when the commit failed (a lock lost with its
// database session: LOCK_ERROR), since the files then stay on disk, uncommitted until
// shed_maintenance commits them, and without a record every member could replace or delete
// them. Created: absent from the zone before the command (before), present after it (after)
// and still now (the guard may have removed it), not written beside it by another member.
// Errors leave files without a record (open to every member), as before groups existed.
func (g *execGuard) recordCreated(before, after core.Snapshot) {
	if g == nil || g.s.Config().GroupDefaultMode == core.ModeGroup {
		return
	}
	st, err := core.NewStatter(g.z)
	if err != nil {
		return
	}
	defer st.Close()
	beside := g.beside.Paths()
	for _, p := range slices.Sorted(maps.Keys(after.Entries)) {
		if _, existed := before.Entries[p]; existed || after.Entries[p].Dir || slices.Contains(beside, p) {
			continue
		}
		if _, ok := st.Lstat(p); !ok {
			continue // the guard removed it
		}
		_ = g.s.DB().AddOwnership(context.WithoutCancel(g.ctx), store.Ownership{GroupID: g.z.GroupID, Path: p,
			Owner: g.c.UserID, Mode: g.s.Config().GroupDefaultMode})
	}
}

// restore puts back, from HEAD (or the commit of a write beside the command), every
// protected file the command changed and the caller was not allowed to change, and records
// them in data.Reverted.
func (g *execGuard) restore(l *vcs.Locked, data *ExecData) error {
	dirs := map[string]bool{} // ancestor -> still a real folder
	if err := g.besides(); err != nil {
		return err
	}
	st, err := core.NewStatter(g.z)
	if err != nil {
		return core.Errf(core.InternalError, "Cannot open the %s zone", g.z.Name).Because(err)
	}
	defer st.Close()
	var firstErr error
	for _, f := range g.files {
		reason := g.check(st, f, dirs)
		if reason == "" {
			continue
		}
		err := core.PutBack(l, g.z.Fs, f.rec.Path, f.from)
		if errors.Is(err, core.ErrNoVersion) && f.from.Fixed {
			err = g.z.Fs.RemoveAll(f.rec.Path) // created beside the command, and contested: no version to trust
		}
		if err != nil {
			if firstErr == nil {
				firstErr = core.Errf(core.ExecutionError, "A protected file changed by the command could not be restored: %s", f.rec.Path).
					With("path", f.rec.Path).Because(err).WithHint("Run shed_info(action='maintenance'), then check the file with shed_version(action='history')")
			}
			continue
		}
		data.Reverted = append(data.Reverted, core.RevertedFile{Mode: f.rec.Mode, Owner: f.rec.Owner, Path: f.rec.Path, Reason: reason})
	}
	if err := g.restoreCompanions(st, data); err != nil && firstErr == nil {
		firstErr = err
	}
	return firstErr
}

// check says why f must be restored ("" = unchanged, or a change the caller may make; a
// record of a file the caller was allowed to delete and that is gone is dropped).
func (g *execGuard) check(sr *core.Statter, f guarded, dirs map[string]bool) string {
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
	case f.mayWrite, !f.contested && core.SameEntry(st, f.st):
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
func realDirs(z *core.Zone, dir string, seen map[string]bool) bool {
	if dir == "." || dir == "" {
		return true
	}
	if ok, known := seen[dir]; known {
		return ok
	}
	ok := realDirs(z, path.Dir(dir), seen)
	if ok {
		fi, _, err := z.Fs.LstatIfPossible(dir)
		ok = err == nil && fi.IsDir()
	}
	seen[dir] = ok
	return ok
}

// besides brings in the writes of other members beside the command: the file as each left
// it replaces the one before the command, and a recorded file created beside it is guarded
// as well.
func (g *execGuard) besides() error {
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
			rec, found, err := g.s.DB().Ownership(g.ctx, g.z.GroupID, p)
			if err != nil {
				return core.OwnershipErr(err)
			}
			if !found {
				continue // open to every member
			}
			g.files = append(g.files, guarded{rec: rec, mayWrite: core.Allowed(g.c, rec, core.WriteModify), mayDelete: core.Allowed(g.c, rec, core.WriteDelete)})
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
}

// noteCompanions records, before a command, the companions of f's database when the
// caller may not write it.
func (g *execGuard) noteCompanions(st *core.Statter, f guarded) {
	if f.mayWrite {
		return
	}
	for _, j := range core.Journals {
		info, ok := st.Lstat(f.rec.Path + j)
		g.companions = append(g.companions, guardedCompanion{rel: f.rec.Path + j, rec: f.rec, st: info, existed: ok})
	}
}

// restoreCompanions removes, after a command, every companion of a protected database that
// the command created or changed (one it deleted is what the next open would remove), and
// reports them in data.Reverted.
func (g *execGuard) restoreCompanions(st *core.Statter, data *ExecData) error {
	for _, cp := range g.companions {
		now, ok := st.Lstat(cp.rel)
		if !ok || (cp.existed && core.SameEntry(now, cp.st)) {
			continue
		}
		if err := g.z.Fs.RemoveAll(cp.rel); err != nil {
			return core.Errf(core.ExecutionError, "A file the command wrote beside the protected database %s could not be removed: %s", cp.rec.Path, cp.rel).
				With("path", cp.rel).Because(err).WithHint("Run shed_info(action='maintenance'), then retry")
		}
		reason := "created beside the protected SQLite database " + cp.rec.Path
		if cp.existed {
			reason = "changed beside the protected SQLite database " + cp.rec.Path
		}
		data.Reverted = append(data.Reverted, core.RevertedFile{Mode: cp.rec.Mode, Owner: cp.rec.Owner, Path: cp.rel, Reason: reason})
	}
	return nil
}

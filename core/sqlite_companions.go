package core

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/store"
)

// SQLite's companion files are the database. SQLite keeps X-wal (the write-ahead log),
// X-journal (the rollback journal) and X-shm (the index of the log) beside a database X,
// and whoever opens X next applies what they hold: a log's frames are read as pages of X
// (and copied into X at the next checkpoint), a "hot" journal is rolled back into X. So in
// a group zone a member who may not write X must not create or change its companions
// either: checkGroupWrite applies X's record to them (every tool, unzip's entries), the
// shed_exec guard removes those a command made, and a companion that still reached the
// folder (planted while X was open to every member, or left by a crash) is removed before
// shed_sqlite opens a protected X.

// companionOf returns the database whose companion rel is (zone-relative, clean).
func companionOf(rel string) (string, bool) {
	for _, j := range journals {
		if db, ok := strings.CutSuffix(rel, j); ok && db != "" && !strings.HasSuffix(db, "/") {
			return db, true
		}
	}
	return "", false
}

// checkCompanion refuses kind on key (the ownership key of a path) when it is a companion
// of a database that c may not write. nil when key is no companion, or its database has no
// record.
func (s *Service) checkCompanion(ctx context.Context, c Caller, z *Zone, key string) error {
	db, ok := companionOf(key)
	if !ok {
		return nil
	}
	o, found, err := s.db.Ownership(ctx, z.GroupID, physicalRel(z, db))
	if err != nil {
		return ownershipErr(err)
	}
	if !found || !fileExists(z, o.Path) {
		return nil
	}
	// Creating, changing, moving or deleting a companion changes what the database holds:
	// it is a write of the database, whatever the kind of the operation on the file.
	e := refusal(c, o, writeModify)
	if e == nil {
		return nil
	}
	e.Message = key + " is part of the SQLite database " + o.Path + ". " + e.Message
	return e.With("path", key).With("database", o.Path).With("zone", z.Label).
		WithHint("SQLite applies %s to %s: only who may write the database may write it (through shed_sqlite)", key, o.Path)
}

// protectedDB is the record of the database d when it is protected (mode owner or
// owner_ro in a group zone).
func (s *Service) protectedDB(ctx context.Context, d *dbFile) (store.Ownership, bool, error) {
	if d.z.Kind != GroupZone {
		return store.Ownership{}, false, nil
	}
	o, ok, err := s.db.Ownership(ctx, d.z.GroupID, physicalRel(d.z, d.rel))
	if err != nil {
		return o, false, ownershipErr(err)
	}
	return o, ok && o.Mode != modeGroup, nil
}

// sweepCompanions removes the companions of a protected database before shed_sqlite opens
// it. The caller holds the file's write lock, so no shed_sqlite connection of this server
// is open on it: a companion there belongs to another program (a running command) while
// that program holds SQLite's locks on the database or its -shm, and is refused as busy;
// otherwise no writer owns it, and what it holds never became part of the database through
// a call that answered success (every shed_sqlite call ends with the log checkpointed and
// the journal gone): it is removed, and the owner's usage credited.
func (s *Service) sweepCompanions(ctx context.Context, d *dbFile) error {
	if _, ok, err := s.protectedDB(ctx, d); err != nil || !ok {
		return err
	}
	z := d.z
	var present []string
	var size int64
	for _, j := range journals {
		if fi, _, err := z.Fs.LstatIfPossible(d.rel + j); err == nil {
			present = append(present, d.rel+j)
			if fi.Mode().IsRegular() {
				size += fi.Size()
			}
		}
	}
	if len(present) == 0 {
		return nil
	}
	host := filepath.Join(z.Fs.Dir(), filepath.FromSlash(d.rel))
	if heldByOthers(host, host+"-shm") {
		return Errf(ExecError, "The database %s is open in another program (a running command)", d.shown).
			With("path", d.shown).With("zone", z.Label).
			WithHint("Retry when the command has ended")
	}
	r, err := s.reserve(ctx, z, -1, amount{})
	if err != nil {
		return err
	}
	for _, p := range present {
		if err := z.Fs.RemoveAll(p); err != nil {
			r.Settle(ctx, amount{})
			return writeError(err, z, d.shown)
		}
	}
	r.Settle(ctx, amount{Bytes: -size, Files: -int64(len(present))})
	return nil
}

// heldByOthers reports whether another process holds a POSIX lock on one of the files:
// SQLite's, for a connection open on the database (in WAL mode it keeps a lock on the -shm
// as long as it is open; a writer in rollback mode locks the database itself). Why
// /proc/locks and not fcntl(F_GETLK): opening and closing a descriptor of the file would
// drop every lock this process holds on it. Matched by inode alone: a rare false match
// answers "busy", never removes a live log. An unreadable /proc/locks reports none.
func heldByOthers(paths ...string) bool {
	inodes := map[string]bool{}
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			inodes[strconv.FormatUint(st.Ino, 10)] = true
		}
	}
	raw, err := os.ReadFile("/proc/locks")
	if err != nil || len(inodes) == 0 {
		return false
	}
	self := strconv.Itoa(os.Getpid())
	for line := range bytes.Lines(raw) {
		// "1: POSIX  ADVISORY  WRITE 1234 08:02:131081 0 EOF" ("1: -> POSIX ..." for a waiter)
		f := strings.Fields(string(line))
		for i := 1; i < len(f); i++ {
			if parts := strings.Split(f[i], ":"); len(parts) == 3 && inodes[parts[2]] {
				if f[i-1] != self {
					return true
				}
			}
		}
	}
	return false
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
func (g *execGuard) noteCompanions(st *statter, f guarded) {
	if f.mayWrite {
		return
	}
	for _, j := range journals {
		info, ok := st.lstat(f.rec.Path + j)
		g.companions = append(g.companions, guardedCompanion{rel: f.rec.Path + j, rec: f.rec, st: info, existed: ok})
	}
}

// restoreCompanions removes, after a command, every companion of a protected database that
// the command created or changed (one it deleted is what the next open would remove), and
// reports them in data["reverted"].
func (g *execGuard) restoreCompanions(st *statter, data map[string]any) error {
	for _, cp := range g.companions {
		now, ok := st.lstat(cp.rel)
		if !ok || (cp.existed && sameEntry(now, cp.st)) {
			continue
		}
		if err := g.z.Fs.RemoveAll(cp.rel); err != nil {
			return Errf(ExecutionError, "A file the command wrote beside the protected database %s could not be removed: %s", cp.rec.Path, cp.rel).
				With("path", cp.rel).Because(err).WithHint("Run shed_info(action='maintenance'), then retry")
		}
		reason := "created beside the protected SQLite database " + cp.rec.Path
		if cp.existed {
			reason = "changed beside the protected SQLite database " + cp.rec.Path
		}
		addReverted(data, map[string]any{"path": cp.rel, "reason": reason, "owner": cp.rec.Owner, "mode": cp.rec.Mode})
	}
	return nil
}

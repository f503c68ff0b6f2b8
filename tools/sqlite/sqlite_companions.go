package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fileshed/fileshed/core"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/store"
)

// The sqlite family's side of the companion rule (companions.go): a stray companion of a
// protected database is removed before shed_sqlite opens it.

// protectedDB is the record of the database d when it is protected (mode owner or
// owner_ro in a group zone).
func (s *Tools) protectedDB(ctx context.Context, d *dbFile) (store.Ownership, bool, error) {
	if d.z.Kind != core.GroupZone {
		return store.Ownership{}, false, nil
	}
	o, ok, err := s.DB().Ownership(ctx, d.z.GroupID, core.PhysicalRel(d.z, d.rel))
	if err != nil {
		return o, false, core.OwnershipErr(err)
	}
	return o, ok && o.Mode != core.ModeGroup, nil
}

// sweepCompanions removes the companions of a protected database before shed_sqlite opens
// it. The caller holds the file's write lock, so no shed_sqlite connection of this server
// is open on it: a companion there belongs to another program (a running command) while
// that program holds SQLite's locks on the database or its -shm, and is refused as busy;
// otherwise no writer owns it, and what it holds never became part of the database through
// a call that answered success (every shed_sqlite call ends with the log checkpointed and
// the journal gone): it is removed, and the owner's usage credited.
func (s *Tools) sweepCompanions(ctx context.Context, d *dbFile) error {
	if _, ok, err := s.protectedDB(ctx, d); err != nil || !ok {
		return err
	}
	z := d.z
	var present []string
	var size int64
	for _, j := range core.Journals {
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
		return core.Errf(core.ExecError, "The database %s is open in another program (a running command)", d.shown).
			With("path", d.shown).With("zone", z.Label).
			WithHint("Retry when the command has ended")
	}
	r, err := s.Reserve(ctx, z, -1, core.Amount{})
	if err != nil {
		return err
	}
	for _, p := range present {
		if err := z.Fs.RemoveAll(p); err != nil {
			r.Settle(ctx, core.Amount{})
			return core.WriteError(err, z, d.shown)
		}
	}
	r.Settle(ctx, core.Amount{Bytes: -size, Files: -int64(len(present))})
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

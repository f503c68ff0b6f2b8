package core

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/lock"
)

// The sweep of a protected database's stray companions (companions.go): before shed_sqlite
// opens a database of a group zone whose mode is owner or owner_ro, the companions that
// reached its folder anyway are removed, as a write of the kernel: under the database's
// lock (the writer's transaction, or HoldDatabase for a reader), after the rules of any
// write (protected names, locked edits of other conversations), its usage settled and, in a
// versioned zone, the removal committed. Only files and links are companions: a folder so
// named is refused (NOT_A_FILE), never removed with what it holds.

// SweepCompanions sweeps the companions of the transaction's database, its first step (the
// write of shed_sqlite), under the step's lock.
func (tx *Tx) SweepCompanions() error {
	st := tx.e.Steps[0]
	return tx.s.sweepCompanions(tx.ctx, tx.c, st.Zone, st.Path, shownOf(st), tx.locks)
}

// HoldDatabase takes the lock of the database rel of z for a reader of a group zone (no
// writer changes the file, and no connection of this server is open on it, while the lock
// is held) and sweeps its companions; it returns the lock's release. On error nothing is
// held.
func (s *Service) HoldDatabase(ctx context.Context, c Caller, z *Zone, rel, shown string) (func(), error) {
	le, err := s.hold(ctx, fileKey(z, rel), lock.Exclusive, "another change of "+rel)
	if err != nil {
		return nil, err
	}
	if err := s.sweepCompanions(ctx, c, z, rel, shown, held{le}); err != nil {
		le.Unlock()
		return nil, err
	}
	return le.Unlock, nil
}

// sweepCompanions removes the companions of the database rel of z when it is protected,
// with h, the database's lock, held. No shed_sqlite connection of this server is open on
// it then: a companion belongs to another program (a running command) while that program
// holds SQLite's locks on the database or its -shm, and is refused as busy; otherwise no
// writer owns it, and what it holds never became part of the database through a call that
// answered success (every shed_sqlite call ends with the log checkpointed and the journal
// gone): it is removed, and the owner's usage credited.
func (s *Service) sweepCompanions(ctx context.Context, c Caller, z *Zone, rel, shown string, h held) error {
	if z.Kind != GroupZone {
		return nil
	}
	o, found, err := s.db.Ownership(ctx, z.GroupID, PhysicalRel(z, rel))
	if err != nil {
		return OwnershipErr(err)
	}
	if !found || o.Mode == ModeGroup {
		return nil
	}
	var present []string
	var sizes []int64
	for _, j := range Journals {
		p := rel + j
		fi, _, err := z.fs.LstatIfPossible(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return WriteError(err, z, shown+j)
		case fi.IsDir():
			return Errf(NotAFile, "Path is a directory, not a file: %s", shown+j).With("path", shown+j).With("zone", z.Label).
				WithHint("A folder named like the database's %s file is in the way: move or delete it (shed_rename, shed_delete)", j)
		}
		if err := CheckProtected(z, p, shown+j); err != nil {
			return err
		}
		if err := s.checkUnlocked(ctx, c, z, p); err != nil {
			return err
		}
		present, sizes = append(present, p), append(sizes, 0)
		if fi.Mode().IsRegular() {
			sizes[len(sizes)-1] = fi.Size()
		}
	}
	if len(present) == 0 {
		return nil
	}
	host := filepath.Join(z.fs.Dir(), filepath.FromSlash(rel))
	if heldByOthers(host, host+"-shm") {
		return Errf(ExecError, "The database %s is open in another program (a running command)", shown).
			With("path", shown).With("zone", z.Label).
			WithHint("Retry when the command has ended")
	}
	r, err := s.reserve(ctx, z, -1, Amount{}, 0)
	if err != nil {
		return err
	}
	var removed Amount
	_, err = s.mutateFile(ctx, c, z, "shed_sqlite", "shed_sqlite: stray companions of "+rel+" removed", func() (Change, error) {
		if err := h.check(false); err != nil {
			return Change{}, err
		}
		for i, p := range present {
			err := z.fs.Remove(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return Change{Paths: present[:i], Growth: removed}, WriteError(err, z, shown)
			}
			removed = Sub(removed, Amount{Bytes: sizes[i], Files: 1})
		}
		return Change{Paths: present, Growth: removed}, nil
	})
	r.Settle(ctx, removed)
	for _, p := range present {
		if !EntryExists(z, p) {
			s.DropGroupRecords(ctx, z, p)
		}
	}
	return err
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

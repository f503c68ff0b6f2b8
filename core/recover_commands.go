package core

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/vcs"
)

// A writing command killed with its server (kill -9, power loss, a dead replica) never ran
// its guards: what it changed stays on disk, its change of another member's owner or
// owner_ro file and of another conversation's locked file included, a .git folder it
// planted too, and the recovery (recover.go) would commit all of it under the fileshed
// author (issue 32). So a command in a versioned space is recorded in the state database
// before it runs (startCommand: its caller, its space, its replica, its commit message and
// the protected names already there) and forgotten once its settlement ended. The recovery
// of a space with such records applies the command's own guards (command_guard.go, built from
// the records: deadGuard): it puts back from HEAD every file one of those callers was not
// allowed to change, removes the companions of protected SQLite databases that differ from
// HEAD and every protected name that was not there before the command (SweepProtected), and
// only then commits what remains, with the command's caller
// as author and a message naming the command; then it forgets the records. Why HEAD: the
// command held the space's turn from its first measure to its commit, so HEAD is the space
// as the command found it, with the writes other callers committed beside it.

// recoveredSuffix ends the message of the commit of a command a stop interrupted.
const recoveredSuffix = " (interrupted by an unclean stop; what it was not allowed to change was put back)"

// startCommand records a writing command before it runs in the versioned zone z: c runs it,
// message is its commit message, before the zone's snapshot under the gate before it runs
// (its protected names are kept by a recovery, as the command's own guard keeps them). end
// forgets the record: call it once the command's settlement ended (committed, rolled back
// or failed), never when the process dies.
func (s *Service) startCommand(ctx context.Context, c Caller, z *Zone, message string, before Snapshot) (end func(), err error) {
	rec := store.Command{ID: rand.Text(), Replica: confine.Replica(), Owner: z.Owner, UserID: c.UserID,
		Name: c.Name, Email: c.Email, ConvID: c.ConvID, Message: message, Protected: protectedTops(z, before),
		Started: time.Now()}
	if err := s.db.StartCommand(ctx, rec); err != nil {
		return nil, Errf(InternalError, "Cannot record the command before it runs").Because(err).
			WithHint("Retry in a moment; nothing was changed")
	}
	return func() { _ = s.db.EndCommand(context.WithoutCancel(ctx), rec.ID) }, nil
}

// protectedTops lists the topmost protected names of the snapshot. Only each entry's own
// name is looked at: the folders above it are entries too (a command's every run pays this
// walk of the snapshot, 50,000 names in a few milliseconds).
func protectedTops(z *Zone, snap Snapshot) []string {
	tops := map[string]bool{}
	for rel := range snap.Entries {
		if ProtectedReason(z, path.Base(rel)) != "" {
			tops[protectedTop(z, rel)] = true
		}
	}
	return slices.Sorted(maps.Keys(tops))
}

// deadCommands lists the records of z's space that dead says belong to commands no process
// runs any more.
func (s *Service) deadCommands(ctx context.Context, z *Zone, dead func(store.Command) bool) ([]store.Command, error) {
	all, err := s.db.Commands(ctx, z.Owner)
	if err != nil {
		return nil, Errf(InternalError, "Cannot read the commands of the %s zone", z.Label).Because(err)
	}
	return slices.DeleteFunc(all, func(c store.Command) bool { return !dead(c) }), nil
}

// recoverInterrupted settles, for a writing command about to run in the versioned zone z,
// the commands that died in its space before it: the caller holds the space's turn, its gate
// and its repository lock (l), so no command of the space runs anywhere and every record of
// the space is a dead one's. Why here too: among replicas the leader comes seconds after a
// replica died, and a command run meanwhile would commit the dead one's changes, unguarded,
// as its own. One indexed query when there is none.
func (s *Service) recoverInterrupted(ctx context.Context, l *vcs.Locked, z *Zone) error {
	cmds, err := s.deadCommands(ctx, z, func(store.Command) bool { return true })
	if err != nil || len(cmds) == 0 {
		return err
	}
	return s.settleDead(ctx, l, z, cmds)
}

// settleDead applies the guards of the dead commands cmds of z's space under l (guardDead),
// commits what remains as the last one's caller's, and forgets them.
func (s *Service) settleDead(ctx context.Context, l *vcs.Locked, z *Zone, cmds []store.Command) error {
	c, message := commandCommit(cmds)
	ch := Change{All: true, BeforeCommit: func(l *vcs.Locked) error { return s.guardDead(ctx, l, z, cmds) }}
	if _, err := s.Commit(l, c, z, "fileshed", message, ch); err != nil {
		return err
	}
	for _, cmd := range cmds {
		if err := s.db.EndCommand(ctx, cmd.ID); err != nil {
			return Errf(InternalError, "Cannot forget an interrupted command of the %s zone", z.Label).Because(err)
		}
	}
	return nil
}

// commandCommit is the author and message of the recovery commit of cmds (oldest first):
// the last command's caller, its message and how many earlier ones died in the space.
func commandCommit(cmds []store.Command) (Caller, string) {
	last := cmds[len(cmds)-1]
	msg := last.Message + recoveredSuffix
	if n := len(cmds) - 1; n > 0 {
		msg += fmt.Sprintf(" (with %d earlier interrupted command(s))", n)
	}
	return Caller{UserID: last.UserID, Name: last.Name, Email: last.Email, ConvID: last.ConvID}, msg
}

// guardDead applies the guards of the dead commands cmds to z under l, the repository lock,
// with the space's turn and gate held: the same guards a live command runs after it ended
// (guard.apply), built from the records (deadGuard).
func (s *Service) guardDead(ctx context.Context, l *vcs.Locked, z *Zone, cmds []store.Command) error {
	g, err := s.deadGuard(ctx, z, cmds)
	if err != nil {
		return err
	}
	_, _, err = g.apply(l)
	return err
}

// sameAsHead reports whether p is in z as HEAD holds it: every folder above it a real
// folder, itself a regular file of one link, mode 0600, with HEAD's bytes. errNoVersion
// when HEAD does not hold p.
func sameAsHead(l *vcs.Locked, z *Zone, p string) (bool, error) {
	want, err := l.FileAt("HEAD", p)
	if errors.Is(err, vcs.ErrNotFound) || errors.Is(err, vcs.ErrIsDir) {
		return false, errNoVersion
	}
	if err != nil {
		return false, err
	}
	for _, d := range ancestors(p) {
		if fi, _, err := z.fs.LstatIfPossible(d); err != nil || !fi.IsDir() {
			return false, nil
		}
	}
	st, err := NewStatter(z)
	if err != nil {
		return false, err
	}
	defer st.Close()
	info, ok := st.Lstat(p)
	if !ok || info.Mode&unix.S_IFMT != unix.S_IFREG || info.Nlink != 1 || info.Mode&0o7777 != 0o600 || info.Size != int64(len(want)) {
		return false, nil
	}
	f, err := z.fs.Open(p)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(want))+1))
	return err == nil && bytes.Equal(got, want), nil
}

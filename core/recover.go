package core

import (
	"context"
	"log/slog"
	"sync"

	"github.com/fileshed/fileshed/core/store"
)

// recovery commits what an unclean stop left uncommitted in a versioned zone. A write
// renames its file into place, then commits it; killed in between (kill -9, power loss),
// the file is on disk and not in the history, and the next write of the zone commits only
// its own paths. So after an unclean stop (sweep.go's marker), the first change of each
// versioned space in this process first commits every difference between the zone and its
// history, under the fileshed author, with a message that says why — or, where a command
// died, after its guards, as its caller's (recover_commands.go). Among replicas
// (state.driver postgres) the leader does it for the spaces of the owners a dead replica
// wrote for (replicas.go).
type recovery struct {
	crashed bool     // set at start, before any request
	done    sync.Map // space directory → struct{}: recovered in this process
}

// recoveryMessage is the commit message of what an unclean stop left uncommitted.
const recoveryMessage = "fileshed: changes written before an unclean stop"

// recoverSpace runs the recovery of z's space once, before the first change of the space in
// this process. With the SQLite state the server is alone on its storage: every command
// record of the space is a dead command's.
func (s *Service) recoverSpace(ctx context.Context, r *OpenRepo, z *Zone) error {
	if !s.recovery.crashed {
		return nil
	}
	if _, ok := s.recovery.done.Load(z.Space); ok {
		return nil
	}
	if err := s.commitLeftovers(ctx, r, z, func() bool {
		_, ok := s.recovery.done.Load(z.Space)
		return ok
	}, func(store.Command) bool { return true }); err != nil {
		return err
	}
	s.recovery.done.Store(z.Space, struct{}{})
	return nil
}

// recoverCommands runs at start with the SQLite state, before the server serves: the spaces
// where a command died with the last server are recovered now (its guards applied, what
// remains committed as its caller's: recover_commands.go), and their owners' usage measured
// again, rather than at their first change, so that no call sees what the command was not
// allowed to change. A space whose recovery fails keeps its records: recoverSpace tries again
// at its first change.
func (s *Service) recoverCommands() {
	ctx, cancel := context.WithTimeout(context.Background(), ownerCleanTimeout)
	defer cancel()
	if err := s.recoverJournal(ctx, ""); err != nil { // before a command's recovery commits
		slog.Warn("journal: recovery", "err", err)
	}
	cmds, err := s.db.Commands(ctx, store.Owner{})
	if err != nil {
		return
	}
	owners := map[store.Owner]bool{}
	for _, c := range cmds {
		owners[c.Owner] = true
	}
	for o := range owners {
		if s.recoverOwner(ctx, o, func(store.Command) bool { return true }) == nil {
			_, _, _ = s.Reconcile(ctx, o) // a failure leaves the old figure: shed_maintenance repairs it
		}
	}
}

// commitLeftovers commits every difference between z's space and its history. It holds the
// space's turn and gate exclusively — across replicas with the PostgreSQL Locker — so that no
// write is between its rename and its commit, and no command runs, while the zone is compared
// with its history; done, asked once they are held, skips the commit. The records of the
// space's commands that dead says died are applied first (guardDead): then the commit is the
// last one's caller's, named after its command; otherwise it is the fileshed author's.
func (s *Service) commitLeftovers(ctx context.Context, r *OpenRepo, z *Zone, done func() bool, dead func(store.Command) bool) error {
	locks, err := s.holdWhole(ctx, z)
	if err != nil {
		return err
	}
	defer locks.release()
	if done() {
		return nil
	}
	cmds, err := s.deadCommands(ctx, z, dead)
	if err != nil {
		return err
	}
	l, le, unlockRepo, err := s.LockRepo(ctx, r, z)
	if err != nil {
		return err
	}
	defer unlockRepo()
	if err := append(locks, le).check(true); err != nil {
		return err
	}
	if len(cmds) > 0 {
		return s.settleDead(ctx, l, z, cmds)
	}
	_, err = s.Commit(l, Caller{UserID: "fileshed"}, z, "fileshed", recoveryMessage, Change{All: true})
	return err
}

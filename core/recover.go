package core

import (
	"context"
	"sync"
)

// recovery commits what an unclean stop left uncommitted in a versioned zone. A write
// renames its file into place, then commits it; killed in between (kill -9, power loss),
// the file is on disk and not in the history, and the next write of the zone commits only
// its own paths. So after an unclean stop (sweep.go's marker), the first change of each
// versioned space in this process first commits every difference between the zone and its
// history, under the fileshed author, with a message that says why. Among replicas
// (state.driver postgres) the leader does it for the spaces of the owners a dead replica
// wrote for (replicas.go).
type recovery struct {
	crashed bool     // set at start, before any request
	done    sync.Map // space directory → struct{}: recovered in this process
}

// recoveryMessage is the commit message of what an unclean stop left uncommitted.
const recoveryMessage = "fileshed: changes written before an unclean stop"

// recoverSpace runs the recovery of z's space once, before the first change of the space in
// this process.
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
	}); err != nil {
		return err
	}
	s.recovery.done.Store(z.Space, struct{}{})
	return nil
}

// commitLeftovers commits every difference between z's space and its history, under the
// fileshed author. It holds the space's turn and gate exclusively — across replicas with
// the PostgreSQL Locker — so that no write is between its rename and its commit while the
// zone is compared with its history; done, asked once they are held, skips the commit.
func (s *Service) commitLeftovers(ctx context.Context, r *OpenRepo, z *Zone, done func() bool) error {
	locks, err := s.holdWhole(ctx, z)
	if err != nil {
		return err
	}
	defer locks.release()
	if done() {
		return nil
	}
	l, le, unlockRepo, err := s.LockRepo(ctx, r, z)
	if err != nil {
		return err
	}
	defer unlockRepo()
	if err := append(locks, le).check(true); err != nil {
		return err
	}
	_, err = s.Commit(l, Caller{UserID: "fileshed"}, z, "fileshed", recoveryMessage, Change{All: true})
	return err
}

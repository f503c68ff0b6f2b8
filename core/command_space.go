package core

import (
	"context"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/vcs"
)

// cmdSpace is what a writing command holds of its zone's space (command.go): the turn from
// the first measure to the commit, and the writers' shared state (Beside) to note the writes
// beside it; in a versioned zone, its open repository too (r; nil in Storage).
//
// In a versioned zone the command holds the space's turn from its first measure to its
// commit, so no whole-tree operation (rename, delete, restore...) runs meanwhile, but the
// zone's gate (exclusively) and the repository lock only before its run and after it: other
// callers' writes of single files go on while it runs, each noted for it (beside.go).
// Why: a group member's command held both for its whole run, up to exec_timeout_max, and
// every other member's writes waited behind it (issue 24).
type cmdSpace struct {
	s    *Service
	r    *OpenRepo
	b    *Beside
	z    *Zone
	turn lock.Lease
	// done gives back what holdSpace opened (the repository, or the plain space's state).
	done func()
	// leases are the turn and, within locked, the gate and the repository lock: checked
	// before the commit (checked).
	leases  []lock.Lease
	running bool
}

// holdSpace takes z's space turn, waiting for whole-tree operations in flight (and, in
// Storage, for the writes in flight: plain.go), after opening its repository in a
// versioned zone. A mirror's command (mirrored: the decrypted copy of an encrypted zone)
// holds nothing: no write of the zone reaches the copy.
func (s *Service) holdSpace(ctx context.Context, z *Zone, mirrored bool) (*cmdSpace, error) {
	if mirrored {
		return nil, nil
	}
	sp := &cmdSpace{s: s, z: z}
	if z.Versioned {
		r, err := s.Repo(z)
		if err != nil {
			return nil, err
		}
		sp.r, sp.b, sp.done = r, &r.Beside, r.Release
	} else {
		sp.b, sp.done = s.plainBeside(z)
	}
	turn, err := s.hold(ctx, spaceKey(KindSpace, z), lock.Exclusive, "another command or change of the whole "+z.Label+" zone")
	if err != nil {
		sp.done()
		return nil, err
	}
	sp.turn = turn
	sp.b.SetCommandTurn(true) // this process's writes of the zone now run beside the command
	return sp, nil
}

// locked runs fn with the zone's gate held exclusively and, in a versioned zone, the
// repository lock (l nil otherwise): no write of the zone is between its change and its
// commit, or its note.
func (sp *cmdSpace) locked(ctx context.Context, fn func(l *vcs.Locked) error) error {
	if sp == nil {
		return fn(nil)
	}
	gate, err := sp.s.hold(ctx, spaceKey(KindGate, sp.z), lock.Exclusive, "another change in the "+sp.z.Label+" zone")
	if err != nil {
		return err
	}
	defer gate.Unlock()
	sp.leases = []lock.Lease{sp.turn, gate}
	defer func() { sp.leases = nil }()
	if sp.r == nil {
		return fn(nil)
	}
	l, repo, unlock, err := sp.s.LockRepo(ctx, sp.r, sp.z)
	if err != nil {
		return err
	}
	defer unlock()
	sp.leases = append(sp.leases, repo)
	return fn(l)
}

// checked is the commit's BeforeCommit: the write transaction's check of the leases: when
// the database session of one ended, another replica may hold its key, so the command's
// change is not committed (LOCK_ERROR; shed_maintenance commits it later). The guards
// already put back what the command may not change.
func (sp *cmdSpace) checked() func(*vcs.Locked) error {
	return func(*vcs.Locked) error { return held(sp.leases).check(true) }
}

// versioned reports whether the command runs in a versioned zone's space (not in a mirror).
func (sp *cmdSpace) versioned() bool { return sp != nil && sp.r != nil }

// start (under locked) opens the command's note: from now on single-file writes of the
// zone are noted in it.
func (sp *cmdSpace) start() *BesideRun {
	if sp == nil {
		return nil
	}
	sp.b.Run, sp.running = &BesideRun{Writes: map[string]BesideWrite{}}, true
	return sp.b.Run
}

// stop (under locked) closes the note.
func (sp *cmdSpace) stop() {
	if sp != nil {
		sp.b.Run, sp.running = nil, false
	}
}

// release gives the turn and the repository back; a note left open (a panic during the
// run) is closed first, under the gate.
func (sp *cmdSpace) release() {
	if sp == nil {
		return
	}
	if sp.running {
		if gate, err := sp.s.hold(context.Background(), spaceKey(KindGate, sp.z), lock.Exclusive, "the gate"); err == nil {
			sp.stop()
			gate.Unlock()
		}
	}
	sp.b.SetCommandTurn(false)
	sp.turn.Unlock()
	sp.done()
}

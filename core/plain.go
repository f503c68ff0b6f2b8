package core

import (
	"context"
	"sync"
)

// Writes beside a command in an unversioned zone (Storage). No commit orders them, yet a
// writing command there measures the zone before and after its run, puts back the files
// other conversations hold (its lock guard) and rolls back what it created when it went over
// the quota: a write of another call during the run would be taken for the command's own
// (a locked edit's save put back, the write's growth counted twice, its file removed by the
// rollback). So the space has a turn and a gate as a versioned one has, without the
// repository: a command holds the turn from its first measure to its last and the gate
// exclusively around its measures; a write holds the turn shared (it waits for a command on
// another replica) or, beside a command of this process, the gate shared, and is noted in
// the command's run (growth and paths): holdBeside.

// plainSpaces are the Beside states of the unversioned spaces in use, by space directory.
type plainSpaces struct {
	mu sync.Mutex
	m  map[string]*plainSpace
}

// plainSpace is one unversioned space's Beside and the number of callers holding it.
type plainSpace struct {
	Beside
	refs int
}

// plainBeside returns what the writers of z's unversioned space share with a command of this
// process running there, and its release (call it once). The state lives while someone
// holds it: a command holds it from its first measure to its last.
func (s *Service) plainBeside(z *Zone) (*Beside, func()) {
	ps := &s.plain
	ps.mu.Lock()
	defer ps.mu.Unlock()
	sp := ps.m[z.Space]
	if sp == nil {
		if ps.m == nil {
			ps.m = map[string]*plainSpace{}
		}
		sp = &plainSpace{}
		ps.m[z.Space] = sp
	}
	sp.refs++
	return &sp.Beside, func() {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if sp.refs--; sp.refs == 0 {
			delete(ps.m, z.Space)
		}
	}
}

// mutatePlain runs fn, a change of the unversioned zone z: it holds what a write holds of
// the space (holdBeside) and notes in the run of a command of this process running there
// what fn added and the paths it reports.
func (s *Service) mutatePlain(ctx context.Context, z *Zone, fn func() (Change, error)) error {
	b, release := s.plainBeside(z)
	defer release()
	locks, err := s.holdBeside(ctx, b, z)
	if err != nil {
		return err
	}
	defer locks.release()
	ch, err := fn()
	run := b.Run
	run.grew(ch.Growth)
	run.noteWrites(z, ch.Paths)
	return err
}

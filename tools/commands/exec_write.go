package commands

import (
	"context"
	"errors"
	"strings"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/vcs"
)

// errOverQuota ends the steps after a command that went over the quota: nothing is
// committed; Exec answers QUOTA_EXCEEDED after the rollback.
var errOverQuota = errors.New("command over quota")

// execWrite runs p, a command that may write in zone z, and settles what it did; the caller
// holds the owner's exec lock, guard (the files other conversations hold locked) and q (the
// usage measure). Before the run the zone is measured (exec_quota.go) and, in group zones,
// its protected files are noted (groups_guard.go). After it, the guards put back what the
// command may not change, the zone is measured again, a command over the quota is rolled
// back (exec_rollback.go), the usage is settled, and in versioned zones the changes are
// committed with the caller as author. There the command is recorded in the state database
// before its run (core.StartCommand) and forgotten once its settlement ran: killed in
// between with its server, the recovery applies its guards before it commits
// (core/recover_commands.go).
//
// In a versioned zone the command holds the space's turn from its first measure to its
// commit, so no whole-tree operation (rename, delete, restore...) runs meanwhile, but the
// zone's gate (exclusively) and the repository lock only before its run and after it: other
// callers' writes of single files go on while it runs, each noted for it (core/beside.go).
// Why: a group member's command held both for its whole run, up to exec_timeout_max, and
// every other member's writes waited behind it (issue 24).
func (s *Tools) execWrite(ctx context.Context, c core.Caller, z *core.Zone, in ExecInput, p *execPlan, guard *lockGuard, q *execQuota, mirrored bool) (core.Result, error) {
	sp, err := s.holdSpace(ctx, z, mirrored)
	if err != nil {
		return core.Result{}, err
	}
	defer sp.release()
	var owned *execGuard
	message := "shed_exec: " + core.Shorten(strings.Join(append([]string{in.Cmd}, in.Args...), " "))
	var recorded func()
	settled := false
	defer func() {
		if recorded != nil && settled {
			recorded() // the settlement ran: nothing left to recover (else the recovery's)
		}
	}()
	err = sp.locked(ctx, func(l *vcs.Locked) error {
		if l != nil { // a command that died in the space is settled first, as its caller's
			if err := s.RecoverInterrupted(ctx, l, z); err != nil {
				return err
			}
		}
		if err := guard.take(); err != nil {
			return err
		}
		if err := q.measureBefore(); err != nil {
			return err
		}
		var err error
		if owned, err = s.guardExec(ctx, c, z); err != nil { // group zones: ownership kept
			return err
		}
		if sp.versioned() { // a crash before the settlement: the recovery applies the guards
			if recorded, err = s.StartCommand(ctx, c, z, message, q.before); err != nil {
				return err
			}
		}
		run := sp.start()
		q.beside = run
		guard.follow(run)
		if owned != nil {
			owned.beside = run
		}
		return nil
	})
	if err != nil {
		return core.Result{}, err
	}
	runCtx, kill := context.WithCancel(ctx)
	defer kill()
	w := q.watch(kill)
	data, runErr := s.run(runCtx, z, z.Fs, p)
	w.halt()
	var rb *rolledBack
	var peak core.Amount
	// The command ran: its settlement and commit happen whatever became of the call.
	err = sp.locked(context.WithoutCancel(ctx), func(l *vcs.Locked) error {
		defer sp.stop()
		settled = true
		if data == nil {
			return runErr // refused or not started: nothing changed
		}
		for _, step := range s.afterCommand(guard) {
			step(data)
		}
		after, err := core.TakeSnapshot(z.Fs.Dir())
		if err == nil {
			if swept := core.SweepProtected(z, q.before, after); len(swept) > 0 {
				data.Reverted = append(data.Reverted, swept...)
				after, err = core.TakeSnapshot(z.Fs.Dir())
			}
		}
		if err != nil {
			return core.Errf(core.InternalError, "Cannot measure the %s zone", z.Name).Because(err)
		}
		if err := q.measureAfter(); err != nil {
			return err
		}
		if peak = w.peakWith(after); w.killed.Load() || q.over(after) {
			undone, restore := q.undo(after)
			if l != nil {
				restoreVersions(l, z, restore, &undone)
			}
			if again, err := core.TakeSnapshot(z.Fs.Dir()); err == nil {
				q.settle(again)
			}
			rb = &undone
			return errOverQuota
		}
		q.settle(after)
		if l == nil {
			return nil // no repository: nothing to commit
		}
		ch := owned.change(core.Change{All: true}, data)
		if restore := ch.BeforeCommit; restore != nil {
			// The ownership guard puts protected files back after the measure: count them.
			ch.BeforeCommit = func(l *vcs.Locked) error {
				n := len(data.Reverted)
				err := restore(l)
				if len(data.Reverted) > n { // only then did the disk change after the measure
					if again, e := core.TakeSnapshot(z.Fs.Dir()); e == nil {
						q.adjust(after, again)
					}
				}
				return err
			}
		}
		ch.BeforeCommit = sp.checked(ch.BeforeCommit)
		_, err = s.Commit(l, c, z, "shed_exec", message, ch)
		owned.recordCreated(q.before, after)
		return err
	})
	if rb != nil {
		return core.Result{}, q.overQuota(in.Cmd, peak, *rb)
	}
	if err != nil {
		return core.Result{}, err
	}
	return execResult(data, runErr)
}

// execSpace is what a writing command holds of its zone's space: the turn from the first
// measure to the commit, and the writers' shared state (Beside) to note the writes beside
// it; in a versioned zone, its open repository too (r; nil in Storage).
type execSpace struct {
	s    *Tools
	r    *core.OpenRepo
	b    *core.Beside
	z    *core.Zone
	turn lock.Lease
	// done gives back what holdSpace opened (the repository, or the plain space's state).
	done func()
	// leases are the turn and, within locked, the gate and the repository lock: checked
	// before the commit (checked).
	leases  []lock.Lease
	running bool
}

// holdSpace takes z's space turn, waiting for whole-tree operations in flight (and, in
// Storage, for the writes in flight: core/plain.go), after opening its repository in a
// versioned zone. A mirror's command (mirrored: the decrypted copy of an encrypted zone)
// holds nothing: no write of the zone reaches the copy.
func (s *Tools) holdSpace(ctx context.Context, z *core.Zone, mirrored bool) (*execSpace, error) {
	if mirrored {
		return nil, nil
	}
	sp := &execSpace{s: s, z: z}
	if z.Versioned {
		r, err := s.Repo(z)
		if err != nil {
			return nil, err
		}
		sp.r, sp.b, sp.done = r, &r.Beside, r.Release
	} else {
		sp.b, sp.done = s.PlainSpace(z)
	}
	turn, err := s.HoldLease(ctx, core.SpaceKey(core.KindSpace, z), lock.Exclusive, "another command or change of the whole "+z.Label+" zone")
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
func (sp *execSpace) locked(ctx context.Context, fn func(l *vcs.Locked) error) error {
	if sp == nil {
		return fn(nil)
	}
	gate, err := sp.s.HoldLease(ctx, core.SpaceKey(core.KindGate, sp.z), lock.Exclusive, "another change in the "+sp.z.Label+" zone")
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

// checked is the commit's BeforeCommit: before (the ownership guard's, if any), then the
// write transaction's check of the leases (core.CheckLeases): when the database session of
// one ended, another replica may hold its key, so the command's change is not committed
// (LOCK_ERROR; shed_maintenance commits it later). Why after before: what the command may
// not change is put back even then.
func (sp *execSpace) checked(before func(*vcs.Locked) error) func(*vcs.Locked) error {
	return func(l *vcs.Locked) error {
		if before != nil {
			if err := before(l); err != nil {
				return err
			}
		}
		return core.CheckLeases(true, sp.leases...)
	}
}

// versioned reports whether the command runs in a versioned zone's space (not in a mirror).
func (sp *execSpace) versioned() bool { return sp != nil && sp.r != nil }

// start (under locked) opens the command's note: from now on single-file writes of the
// zone are noted in it.
func (sp *execSpace) start() *core.BesideRun {
	if sp == nil {
		return nil
	}
	sp.b.Run, sp.running = &core.BesideRun{Writes: map[string]core.BesideWrite{}}, true
	return sp.b.Run
}

// stop (under locked) closes the note.
func (sp *execSpace) stop() {
	if sp != nil {
		sp.b.Run, sp.running = nil, false
	}
}

// release gives the turn and the repository back; a note left open (a panic during the
// run) is closed first, under the gate.
func (sp *execSpace) release() {
	if sp == nil {
		return
	}
	if sp.running {
		if gate, err := sp.s.Hold(context.Background(), core.SpaceKey(core.KindGate, sp.z), lock.Exclusive, "the gate"); err == nil {
			sp.stop()
			gate()
		}
	}
	sp.b.SetCommandTurn(false)
	sp.turn.Unlock()
	sp.done()
}

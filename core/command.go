package core

import (
	"context"
	"time"

	"github.com/fileshed/fileshed/core/vcs"
)

// The command transaction: a writing command (shed_exec) changes a zone in ways nobody can
// declare in advance, so the kernel runs its protocol around the launch, as Begin/Apply do
// around a tool's change (tx.go):
//
//	cx, err := s.BeginCommand(ctx, c, z, Command{Name: "tar", Message: "shed_exec: tar -xf a.tar", ...})
//	if err != nil { return err }  // a locked operand, busy, the record not written
//	defer cx.Close()
//	... run the program in z, under a watchdog fed by cx.Watch() ...
//	reverted, err := cx.Finish(ran, killed, peak)
//
// BeginCommand takes, in order, the owner's turn (one writing command per owner at a time),
// the owner's quota lock (shared), the space's turn and then, for the start, the zone's gate
// exclusively and the repository lock: a command that died in the space is settled first
// (recover_commands.go), the files other conversations hold locked are copied
// (command_locks.go), the zone is measured (command_quota.go), the recorded files of a group
// zone are noted (command_owned.go), and in a versioned zone the command is recorded in the
// state database before it runs (startCommand). Finish, with the gate and the repository
// lock taken again, applies the guards (guard.apply: locked files, other owners' files and
// their SQLite companions, protected names: one put-back, putback.go), measures the zone,
// rolls back a command over the quota (command_rollback.go), settles the owner's usage,
// records the owner of the files the command created (the transaction's rule,
// RecordGroupFiles), commits with the caller as author and forgets the record. A command
// killed with its server between the two is settled by the recovery with the same guards.

// Command describes a writing command for BeginCommand.
type Command struct {
	// Name is the program (messages); Message is the commit message.
	Name, Message string
	// Operands are the zone-relative paths the command names (its output files included):
	// one another conversation holds in a locked edit refuses the command (FILE_LOCKED).
	Operands []string
	// Wait bounds the wait for the owner's turn (the command's timeout).
	Wait time.Duration
	// Mirrored says the zone is the decrypted copy of an encrypted zone: the caller already
	// holds the owner's turn (OwnerTurn), nothing of the zone's space is held and nothing is
	// committed (the copy is written back by its Mirror).
	Mirrored bool
}

// CommandTx is a writing command in progress (BeginCommand); Close it on every path.
type CommandTx struct {
	s      *Service
	ctx    context.Context
	c      Caller
	z      *Zone
	cmd    Command
	turn   func()
	locks  *lockGuard
	q      *cmdQuota
	sp     *cmdSpace
	owned  *ownedGuard
	end    func()
	jr     *cmdJournal // the journal's placeholder (journal_command.go)
	ran    bool        // Finish's settlement ran: the record is forgotten at Close
	closed bool
}

// BeginCommand prepares the writing command cmd of c in z; see the comment above for what it
// takes and notes. On error nothing is held.
func (s *Service) BeginCommand(ctx context.Context, c Caller, z *Zone, cmd Command) (cx *CommandTx, err error) {
	cx = &CommandTx{s: s, ctx: ctx, c: c, z: z, cmd: cmd}
	defer func() {
		if err != nil {
			cx.Close()
			cx = nil
		}
	}()
	if !cmd.Mirrored {
		wait, stop := context.WithTimeout(ctx, cmd.Wait)
		cx.turn, err = s.OwnerTurn(wait, z, CommandSlot)
		stop()
		if err != nil {
			return cx, err
		}
	}
	if cx.locks, err = s.guardLocks(ctx, c, z, cmd.Operands); err != nil {
		return cx, err
	}
	if cx.q, err = s.startCmdQuota(ctx, z); err != nil {
		return cx, err
	}
	if cx.sp, err = s.holdSpace(ctx, z, cmd.Mirrored); err != nil {
		return cx, err
	}
	return cx, cx.sp.locked(ctx, func(l *vcs.Locked) error {
		if l != nil { // a command that died in the space is settled first, as its caller's
			if err := s.recoverInterrupted(ctx, l, z); err != nil {
				return err
			}
		}
		if err := cx.locks.take(); err != nil {
			return err
		}
		if err := cx.q.measureBefore(); err != nil {
			return err
		}
		var err error
		if cx.owned, err = s.guardOwned(ctx, c, z); err != nil { // group zones: ownership kept
			return err
		}
		if cx.sp.versioned() { // a crash before the settlement: the recovery applies the guards
			if cx.end, err = s.startCommand(ctx, c, z, cmd.Message, cx.q.before); err != nil {
				return err
			}
		}
		if cx.jr, err = s.beginCommandJournal(ctx, c, z, cmd); err != nil {
			return err
		}
		run := cx.sp.start()
		cx.q.beside = run
		cx.locks.follow(run)
		if cx.owned != nil {
			cx.owned.beside = run
		}
		return nil
	})
}

// Watch is what the quota watchdog of the running command needs: the zone's folder, the zone
// as measured before the command, what the owner's quota has left then, and what the writes
// beside the command added so far (theirs, not the command's).
func (cx *CommandTx) Watch() (dir string, before, budget Amount, others func() Amount) {
	return cx.z.fs.Dir(), cx.q.before.Usage(), Sub(cx.q.limit, cx.q.used), cx.q.beside.Grown
}

// Finish settles the command once it ended: ran says it started (else nothing changed and
// only its note is closed), killed that the watchdog stopped it, peak the largest zone the
// watchdog measured. It returns what the guards put back or removed (data.reverted), or
// QUOTA_EXCEEDED when the command went over the quota (its changes rolled back, nothing
// committed), or the error of the guards or the commit. It settles even when ctx ended.
func (cx *CommandTx) Finish(ran, killed bool, peak Amount) ([]RevertedFile, error) {
	var reverted []RevertedFile
	var over *Error
	s, z, q := cx.s, cx.z, cx.q
	ctx := context.WithoutCancel(cx.ctx)
	err := cx.sp.locked(ctx, func(l *vcs.Locked) error {
		defer cx.sp.stop()
		cx.ran = true
		if !ran {
			cx.jr.settle(Snapshot{}, Snapshot{}, false, "")
			return nil // refused or not started: nothing changed
		}
		g := &guard{s: s, z: z, locks: cx.locks, owned: cx.owned, before: q.before}
		var after Snapshot
		var gerr error
		reverted, after, gerr = g.apply(l)
		if after.Entries == nil {
			return gerr // the zone could not be measured
		}
		if err := q.measureAfter(); err != nil {
			return err
		}
		u := after.Usage()
		peak = Amount{Bytes: max(peak.Bytes, u.Bytes), Files: max(peak.Files, u.Files)}
		if killed || q.over(after) {
			undone, restore := q.undo(after)
			if l != nil {
				restoreVersions(l, z, restore, &undone)
			}
			if again, err := TakeSnapshot(z.fs.Dir()); err == nil {
				q.settle(again)
			}
			over = q.overQuota(cx.cmd.Name, peak, undone)
			cx.jr.settle(Snapshot{}, Snapshot{}, false, "") // rolled back
			return nil
		}
		q.settle(after)
		if gerr != nil || l == nil {
			cx.jr.settle(q.before, after, true, "")
			return gerr // a guard failed: nothing is committed; no repository: nothing to commit
		}
		cx.owned.recordCreated(q.before, after)
		hash, err := s.Commit(l, cx.c, z, "shed_exec", cx.cmd.Message, Change{All: true, BeforeCommit: cx.sp.checked()})
		cx.jr.settle(q.before, after, true, hash)
		return err
	})
	if over != nil {
		return nil, over
	}
	if err != nil {
		return nil, err
	}
	return reverted, nil
}

// Close releases what BeginCommand took, the last first; once Finish's settlement ran, the
// command's record is forgotten (else the recovery's). Calling it again does nothing.
func (cx *CommandTx) Close() {
	if cx.closed {
		return
	}
	cx.closed = true
	cx.jr.close(cx.ran) // not settled by Finish: kept unitemised if it ran, else dropped
	if cx.end != nil && cx.ran {
		cx.end()
	}
	cx.sp.release()
	if cx.q != nil {
		cx.q.finish()
	}
	cx.locks.close()
	if cx.turn != nil {
		cx.turn()
	}
}

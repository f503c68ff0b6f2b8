package core

import (
	"context"
	"log/slog"
)

// A command of an encrypted zone runs in the zone's decrypted copy (Mirror): the kernel
// takes the owner's turn (one decrypted copy at a time per owner: the copies are plaintext
// on disk and cost their size), makes the copy, gives the command a zone whose data is the
// copy (BeginCommand with Command.Mirrored runs the protocol there, without the space's
// locks and commit: the copy has neither), and carries the copy's changes back encrypted,
// settling in the owner's usage what the deadline kept out of the zone.
//
//	cm, err := s.BeginMirror(ctx, c, z)   // the owner's turn
//	if err != nil { return err }
//	defer cm.Close()
//	if err := cm.Copy(ctx, names); err != nil { return err } // the copy, within the deadline
//	... BeginCommand(ctx, c, cm.Zone(), Command{Mirrored: true, ...}) ... Finish ...
//	notDecrypted, notWrittenBack, err := cm.WriteBack(ctx)

// CommandMirror is the decrypted copy of an encrypted zone a command runs in
// (BeginMirror); Close it on every path.
type CommandMirror struct {
	*Mirror
	s      *Service
	c      Caller
	z      *Zone // the encrypted zone
	copied *Zone // the zone whose data is the copy
	turn   func()
}

// BeginMirror takes the owner's turn of the encrypted zone z for a command of c (its wait
// bounded by ctx, the command's timeout: TIMEOUT, which says so). On error nothing is held.
func (s *Service) BeginMirror(ctx context.Context, c Caller, z *Zone) (*CommandMirror, error) {
	turn, err := s.OwnerTurn(ctx, z, CommandSlot)
	if err != nil {
		return nil, err
	}
	return &CommandMirror{s: s, c: c, z: z, turn: turn}, nil
}

// Copy copies the zone decrypted, the files names only (nil: the whole zone), within ctx
// (TIMEOUT with the number of files copied, the partial copy removed).
func (cm *CommandMirror) Copy(ctx context.Context, names []string) error {
	m, err := cm.s.OpenMirrorWithin(ctx, cm.z.Fs(), names)
	if err != nil {
		return err
	}
	mz := *cm.z
	mz.fs, mz.Space = m.Fs, m.Root // the lock guard's copies stay in the copy too
	cm.Mirror, cm.copied = m, &mz
	return nil
}

// Zone is the zone whose data is the decrypted copy: the command runs there.
func (cm *CommandMirror) Zone() *Zone { return cm.copied }

// WriteBack carries the copy's changes back into the zone, encrypted (Mirror.WriteBack),
// journaled (journal_mirror.go), and takes out of the owner's usage what the command's
// measure on the copy counted but the deadline kept out of the zone (Mirror.Unsaved).
func (cm *CommandMirror) WriteBack(ctx context.Context) (notDecrypted, notWrittenBack []string, err error) {
	after, err := cm.measure()
	if err != nil {
		return cm.unreadable, nil, err
	}
	var j *txJournal
	if cm.Mirror.ctx.Err() == nil { // past the deadline nothing is carried back: nothing to record
		j = cm.journal(ctx, after)
	}
	if jerr := j.begin(); jerr != nil {
		// Why carry back all the same: the command has run; refusing its changes would lose
		// them. They stay unrecorded, and the log says so.
		slog.Warn("journal: an encrypted zone's command is not recorded", "err", jerr)
		j = nil
	}
	notWrittenBack, err = cm.carry(after)
	j.settle("", Change{}, err)
	notDecrypted = cm.unreadable
	if cm.Unsaved != (Amount{}) {
		// Why the error is ignored: the files are back; a failed adjustment is drift that
		// shed_maintenance's reconcile repairs.
		_ = cm.s.db.Adjust(context.WithoutCancel(ctx), cm.z.Owner, Sub(Amount{}, cm.Unsaved))
	}
	return notDecrypted, notWrittenBack, err
}

// Close removes the copy and gives the owner's turn back. Calling it again does nothing.
func (cm *CommandMirror) Close() {
	if cm.turn == nil {
		return
	}
	if cm.Mirror != nil {
		cm.Remove()
	}
	cm.turn()
	cm.turn = nil
}

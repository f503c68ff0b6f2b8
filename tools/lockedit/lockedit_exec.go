package lockedit

import (
	"context"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/commands"
)

// LockeditExecInput is the input of shed_lockedit_exec.
type LockeditExecInput struct {
	LockeditPathArgs
	Cmd     string   `json:"cmd" required:"true" doc:"Command name (no shell)"`
	Args    []string `json:"args,omitempty" doc:"'.' = the working copy"`
	Timeout int      `json:"timeout,omitempty" minimum:"0"`
}

// LockeditExec answers shed_lockedit_exec (reference §5.10) with shed_exec's policy and
// sandbox, but confined to the working copy only: the copy is moved into a fresh private
// folder, the command runs there (its only readable and writable tree), and the copy is
// moved back. The original, its siblings, and the conversation's other working copies are
// out of reach whatever the arguments or symlinks say (the original ran the command in
// the copy's folder without any argument check).
func (s *Tools) LockeditExec(ctx context.Context, c core.Caller, in LockeditExecInput) (core.Result, error) {
	e, err := s.heldEdit(ctx, c, in.LockeditPathArgs)
	if err != nil {
		return core.Result{}, err
	}
	defer e.done()
	z, ez, p := e.z, e.ez, e.p
	if _, err := workingCopy(z, ez, p); err != nil {
		return core.Result{}, err
	}
	// The command may change the copy's size: settled when the box closes (the copy counts,
	// core/workcopy.go).
	box, err := s.BoxWorkingCopy(ctx, z, ez, p)
	if err != nil {
		return core.Result{}, err
	}
	defer box.Close()
	data, runErr := s.runBoxed(ctx, c, z, box.Fs, box.Base, in)
	// Move the copy back whatever happened; a command that deleted or replaced it by a
	// folder leaves no working copy (save then answers NOT_IN_EDIT_MODE).
	if err := box.Return(); err != nil && runErr == nil {
		runErr = core.Errf(core.NotInEditMode, "The command removed the working copy of %s", p).With("path", p).
			WithHint("Call shed_lockedit(action='open') again to start from the original")
	}
	if runErr != nil {
		return core.Result{}, runErr
	}
	data.Zone, data.Path = z.Name, p
	return core.Result{Data: data, Message: "Command executed in editzone"}, nil
}

// runBoxed runs the command in the private folder box, '.' arguments naming the copy base.
// An encrypted copy is decrypted into a mirror for the command and written back encrypted.
func (s *Tools) runBoxed(ctx context.Context, c core.Caller, z *core.Zone, box core.ReadFs, base string, in LockeditExecInput) (data *commands.ExecData, err error) {
	dir := box
	if box.Sealed() {
		m, err := s.OpenMirror(box, nil)
		if err != nil {
			return nil, err
		}
		defer m.Remove()
		defer func() {
			if werr := data.WriteBack(m); werr != nil && err == nil {
				data, err = nil, werr
			}
		}()
		dir = m.ReadFs()
	}
	args := make([]string, len(in.Args))
	for i, a := range in.Args {
		if a == "." {
			a = base
		}
		args[i] = a
	}
	return s.Commands.RunIn(ctx, c, z, dir, commands.ExecInput{ZoneArgs: core.ZoneArgs{Zone: in.Zone, Group: in.Group, AllowZoneInPath: true},
		Cmd: in.Cmd, Args: args, Timeout: in.Timeout, MaxOutput: -1})
}

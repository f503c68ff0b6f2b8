package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sandbox"
)

// ExecInput is the input of shed_exec (reference §5.1). shed_lockedit_exec reuses it.
type ExecInput struct {
	core.ZoneArgs
	Cmd       string   `json:"cmd" required:"true" doc:"Command name only, e.g. grep (no shell, no pipes)"`
	Args      []string `json:"args,omitempty" doc:"One per argument, e.g. ['-n','TODO','a.txt']"`
	Timeout   int      `json:"timeout,omitempty" minimum:"0" doc:"Seconds (0 = default)"`
	MaxOutput int      `json:"max_output,omitempty" default:"-1" minimum:"-1" doc:"Chars kept per stream (-1 = default)"`
	// StdoutFile and StderrFile are zone-relative files written atomically when the command ends.
	StdoutFile             string `json:"stdout_file,omitempty" doc:"Save stdout to this file instead"`
	StderrFile             string `json:"stderr_file,omitempty"`
	RedirectStderrToStdout bool   `json:"redirect_stderr_to_stdout,omitempty"`
}

// Exec runs one whitelisted command in a zone (reference §5.1, DESIGN §5): policy first
// (core/sandbox.Prepare), then a command slot (core/budget.go), then the kernel layer
// (launcher, rlimits, Landlock). success is true when the command ran; data.returncode
// (and data.ok) say how it ended. A command that may write runs in the kernel's command
// transaction (execWrite, core/command.go): alone among its owner's writing commands,
// under the quota watchdog (exec_watch.go), with the files other conversations have locked
// protected; in versioned zones its changes are committed (single-file writes of others go
// on beside it); the owner's usage is updated from what it changed.
func (s *Tools) Exec(ctx context.Context, c core.Caller, in ExecInput) (core.Result, error) {
	z, err := s.ResolveZone(ctx, c, in.Zone, in.Group, false)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if z.Fs().Sealed() {
		return s.execMirrored(ctx, c, z, in)
	}
	return s.execZone(ctx, c, z, in, false)
}

// execMirrored runs the command of an encrypted zone in its decrypted mirror (the program
// needs plaintext), then writes back, encrypted, what it changed. The command's timeout
// bounds the whole call (issue 24 item 13: a copy of a big zone ran unbounded): the waits
// for a slot and for the owner's turn, the copy, the run and the write-back; what the
// deadline cuts is removed or left unsaved, never half-written. The owner's turn is held
// from the copy to the write-back, so two commands never work on stale copies and a user
// has one decrypted copy at a time. The mirror holds only the command's files when it
// reads nothing else (mirrorNames), else the whole zone.
func (s *Tools) execMirrored(ctx context.Context, c core.Caller, z *core.Zone, in ExecInput) (core.Result, error) {
	p, err := s.plan(z, z.Fs(), in) // refusals first; the operands say what to decrypt
	if err != nil {
		return core.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	release, err := s.AcquireSlot(ctx, c.UserID, core.CommandSlot)
	if err != nil {
		return core.Result{}, err
	}
	defer release()
	m, err := s.BeginMirror(ctx, c, z) // the owner's turn
	if err != nil {
		return core.Result{}, err
	}
	defer m.Close()
	if err := m.Copy(ctx, mirrorNames(z, in.Cmd, p)); err != nil {
		return core.Result{}, s.cutShort(err, p)
	}
	res, err := s.execZone(ctx, c, m.Zone(), in, true)
	data, _ := res.Data.(*ExecData)
	notDecrypted, notWrittenBack, werr := m.WriteBack(ctx) // and settles what the deadline kept out
	data.leftOut(notDecrypted, notWrittenBack)
	if werr != nil && err == nil {
		return core.Result{}, werr
	}
	if m.NotSaved > 0 {
		e, ok := core.AsError(err)
		if !ok { // the command ended in time, its changes did not all go back
			sec := int(p.timeout / time.Second)
			e = core.Errf(core.Timeout, "%s ran, but its timeout (%ds) ended before its changes were all saved", in.Cmd, sec).
				With("command", in.Cmd).With("timeout", sec).
				WithHint("Every file saved is whole, the others are unchanged: call again with a larger timeout (max %d), or change fewer files per call", s.Config().ExecTimeoutMax)
		}
		return core.Result{}, e.With("changes_not_saved", m.NotSaved)
	}
	if err != nil {
		return core.Result{}, s.cutShort(err, p)
	}
	return res, nil
}

// cutShort answers TIMEOUT, with the command's details, for an error the call's deadline
// caused before the command ran (the copy cut, a query cut short); other errors as they are
// (the run's own TIMEOUT wraps no deadline).
func (s *Tools) cutShort(err error, p *execPlan) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	sec := int(p.timeout / time.Second)
	return core.Errf(core.Timeout, "Command timeout after %ds, before %s started: decrypting the files it needs took longer", sec, p.in.Cmd).
		With("command", p.in.Cmd).With("timeout", sec).Because(err).
		WithHint("Name the files the command needs (e.g. cat a.txt: only they are decrypted), or call again with a larger timeout (max %d)", s.Config().ExecTimeoutMax)
}

// execZone is Exec in the resolved zone z; mirrored says z is the decrypted copy of an
// encrypted zone (execMirrored, which already holds a command slot and the owner's turn).
func (s *Tools) execZone(ctx context.Context, c core.Caller, z *core.Zone, in ExecInput, mirrored bool) (core.Result, error) {
	if in.Cmd == "git" && !z.Versioned {
		return core.Result{}, core.Errf(core.CommandForbidden, "git only works in versioned zones (documents, group)").With("command", "git").
			WithHint("Run git in zone='documents' (every write there is committed); storage has no repository")
	}
	p, err := s.plan(z, z.Fs(), in)
	if err != nil {
		return core.Result{}, err
	}
	if in.Cmd == "git" {
		if err := s.FlushIndex(ctx, z); err != nil {
			return core.Result{}, err
		}
	}
	// The slot comes first: a user's commands waiting for their turn count against their
	// share too, so one user never holds more than exec_max_per_user calls in the server.
	if !mirrored {
		release, err := s.AcquireSlot(ctx, c.UserID, core.CommandSlot)
		if err != nil {
			return core.Result{}, err
		}
		defer release()
	}
	// A command that cannot write (uploads, or a reader run with the zone read-only under
	// Landlock) changes nothing: no serialisation, repository lock, commit or usage walk.
	if p.changesNothing {
		data, err := s.run(ctx, z, z.Fs(), p)
		return execResult(data, err)
	}
	return s.execWrite(ctx, c, z, in, p, mirrored)
}

// execWrite runs p, a command that may write in zone z, inside the kernel's command
// transaction (core.BeginCommand): the kernel takes the owner's turn (its wait bounded by the
// command's timeout), the locks, the measure and the record before the run, and after it
// applies the guards, settles the usage and commits (data.reverted: what its guards put
// back). This family supplies the launch and the quota watchdog.
func (s *Tools) execWrite(ctx context.Context, c core.Caller, z *core.Zone, in ExecInput, p *execPlan, mirrored bool) (core.Result, error) {
	cx, err := s.BeginCommand(ctx, c, z, core.Command{Name: in.Cmd, Wait: p.timeout, Mirrored: mirrored,
		Message:  "shed_exec: " + core.Shorten(strings.Join(append([]string{in.Cmd}, in.Args...), " ")),
		Operands: append(slices.Clone(p.operands), p.stdoutFile, p.stderrFile)})
	if err != nil {
		return core.Result{}, err
	}
	defer cx.Close()
	runCtx, kill := context.WithCancel(ctx)
	defer kill()
	dir, before, budget, others := cx.Watch()
	w := watchGrowth(dir, before, budget, others, kill)
	data, runErr := s.run(runCtx, z, z.Fs(), p)
	w.halt()
	// The command ran: its settlement and commit happen whatever became of the call.
	reverted, err := cx.Finish(data != nil, w.killed.Load(), w.peak())
	if err != nil {
		return core.Result{}, err
	}
	if data == nil {
		return core.Result{}, runErr // refused or not started: nothing changed
	}
	data.Reverted = append(data.Reverted, reverted...)
	return execResult(data, runErr)
}

// execResult is the answer of a finished command.
func execResult(data *ExecData, err error) (core.Result, error) {
	if err != nil {
		return core.Result{}, err
	}
	msg := fmt.Sprintf("%s exited with code %d", data.Command, data.ReturnCode)
	var locked []string
	for _, r := range data.Reverted {
		if r.Reason == core.RevertedLocked {
			locked = append(locked, r.Path)
		}
	}
	if len(locked) > 0 {
		msg += fmt.Sprintf("; %d file(s) locked by another conversation were put back unchanged: %s", len(locked), strings.Join(locked, ", "))
	}
	return core.Result{Data: data, Message: msg}, nil
}

// RunIn runs in inside dir, a directory of zone z other than its root (the editzone copy
// of shed_lockedit_exec): the same policy, limits and data as shed_exec, with dir as the
// working directory and the only writable tree; paths are confined to dir. It neither
// commits nor counts usage (the copy is outside the zone's data until saved), but the
// quota watchdog stops a command that writes more than the owner's remaining quota.
func (s *Tools) RunIn(ctx context.Context, c core.Caller, z *core.Zone, dir core.ReadFs, in ExecInput) (*ExecData, error) {
	if in.Cmd == "git" {
		return nil, core.Errf(core.CommandForbidden, "git is not available in an edit copy").With("command", "git").
			WithHint("Use git with shed_exec in zone='documents'")
	}
	p, err := s.plan(z, dir, in)
	if err != nil {
		return nil, err
	}
	release, err := s.AcquireSlot(ctx, c.UserID, core.CommandSlot)
	if err != nil {
		return nil, err
	}
	defer release()
	if p.changesNothing {
		return s.run(ctx, z, dir, p)
	}
	// The copy's folder is not in the quota until saved, but its disk is: the watchdog
	// holds it to the owner's remaining quota as in the zone.
	left, err := s.RemainingQuota(ctx, z)
	if err != nil {
		return nil, err
	}
	before, err := core.TakeSnapshot(dir.Dir())
	if err != nil {
		return nil, core.Errf(core.InternalError, "Cannot measure the edit copy").Because(err)
	}
	runCtx, kill := context.WithCancel(ctx)
	defer kill()
	w := watchGrowth(dir.Dir(), before.Usage(), left, func() core.Amount { return core.Amount{} }, kill)
	data, err := s.run(runCtx, z, dir, p)
	w.halt()
	// The watchdog samples the disk: what it cannot see (a write faster than its tick, a
	// sparse file) is measured after, and what the command added over the quota is removed.
	after, merr := core.TakeSnapshot(dir.Dir())
	if merr != nil {
		return nil, core.Errf(core.InternalError, "Cannot measure the edit copy").Because(merr)
	}
	grown := core.Sub(after.Usage(), before.Usage())
	if w.killed.Load() || grown.Bytes > left.Bytes || grown.Files > left.Files {
		after.RemoveAdded(dir, before)
		return nil, core.Errf(core.QuotaExceeded, "Quota exceeded: %s wrote more than the quota has left (%s, %d files and folders) and was stopped",
			in.Cmd, core.HumanMB(left.Bytes), left.Files).
			With("command", in.Cmd).With("remaining", left.Bytes).With("remaining_files", left.Files).
			WithHint("The files it added are removed; the working copy may be partly changed: shed_lockedit(action='cancel'), then shed_lockedit(action='open') to start over")
	}
	return data, err
}

// Violation maps a policy refusal to the catalogue; its texts never hold host paths.
func Violation(v *sandbox.Violation, z *core.Zone) *core.Error {
	var e *core.Error
	switch v.Kind {
	case sandbox.CommandForbidden:
		if h := forbiddenHint(v.Arg, z); h != nil {
			return h
		}
		e = core.Errf(core.CommandForbidden, "%s", v.Reason).With("command", v.Arg)
	case sandbox.ArgumentRequired:
		e = core.Errf(core.ArgumentRequired, "%s", v.Reason).With("argument", core.Shorten(v.Arg))
	case sandbox.CommandNotFound:
		if h := notFoundHint(v.Arg); h != nil {
			return h
		}
		e = core.Errf(core.CommandNotFound, "%s", v.Reason).With("command", v.Arg)
	case sandbox.InvalidPath:
		e = core.Errf(core.InvalidPath, "%s", v.Reason).With("path", core.Shorten(v.Arg)).With("zone", z.Label)
	case sandbox.PathEscape:
		if pe, ok := core.AsError(v.Err); ok {
			return pe // the zone's own path rules (PATH_STARTS_WITH_ZONE, INVALID_PATH)
		}
		e = core.PathError(v.Err, z, core.Shorten(v.Arg))
		if e.Code == core.InternalError || e.Code == core.FileNotFound {
			e = core.Errf(core.PathEscape, "%s", v.Reason).With("path", core.Shorten(v.Arg)).With("zone", z.Label)
		}
		return e
	default:
		e = core.Errf(core.ArgumentForbidden, "%s", v.Reason).With("argument", core.Shorten(v.Arg))
	}
	if v.Hint != "" {
		e.WithHint("%s", v.Hint)
	}
	return e
}

// mirrorNames is what the mirror of command p needs: its files (operands, output files)
// when cmd reads only those and each is a regular file or does not exist yet; nil (the whole
// zone) otherwise: no operand (the command works on its folder), a folder, or a symlink.
func mirrorNames(z *core.Zone, cmd string, p *execPlan) []string {
	if !core.OperandOnly[cmd] || len(p.operands) == 0 {
		return nil
	}
	for _, a := range p.in.Args {
		// Lists of file names read from a file (wc, du and sort --files0-from, file -f,
		// strings @FILE): the names inside are not operands.
		if strings.HasPrefix(a, "--files0-from") || strings.HasPrefix(a, "--files-from") ||
			cmd == "file" && strings.HasPrefix(a, "-f") || cmd == "strings" && strings.HasPrefix(a, "@") {
			return nil
		}
	}
	names := []string{}
	for _, op := range p.operands {
		if op == "" {
			return nil // the zone root
		}
		fi, _, err := z.Fs().Raw().LstatIfPossible(op)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil, !fi.Mode().IsRegular():
			return nil
		}
		names = append(names, op)
	}
	for _, out := range []string{p.stdoutFile, p.stderrFile} {
		if out != "" {
			names = append(names, out) // its folder must exist in the copy
		}
	}
	slices.Sort(names)
	return slices.Compact(names) // the policy may confine an argument twice
}

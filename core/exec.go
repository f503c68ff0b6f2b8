package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/sandbox"
)

// ExecInput is the input of shed_exec (reference §5.1). shed_lockedit_exec reuses it.
type ExecInput struct {
	ZoneArgs
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
// (core/sandbox.Prepare), then the kernel layer (launcher, rlimits, Landlock). success is
// true when the command ran; data.returncode (and data.ok) say how it ended. In versioned
// zones a command that may write runs under the repository lock and its changes are
// committed; the owner's quota is updated from what it changed.
func (s *Service) Exec(ctx context.Context, c Caller, in ExecInput) (Result, error) {
	z, err := s.resolveZone(ctx, c, in.Zone, in.Group, false)
	if err != nil {
		return Result{}, err
	}
	defer z.Close()
	if in.Cmd == "git" && !z.Versioned {
		return Result{}, Errf(CommandForbidden, "git only works in versioned zones (documents, group)").With("command", "git").
			WithHint("Run git in zone='documents' (every write there is committed); storage has no repository")
	}
	p, err := s.plan(z, z.Fs, in)
	if err != nil {
		return Result{}, err
	}
	if in.Cmd == "git" {
		if err := s.flushIndex(z); err != nil {
			return Result{}, err
		}
	}
	// A command that cannot write (uploads, or a reader run with the zone read-only under
	// Landlock) changes nothing: no repository lock, no commit, no usage walk.
	if p.changesNothing {
		data, err := s.run(ctx, z, z.Fs, p)
		return execResult(data, err)
	}
	q, err := s.startExecQuota(ctx, z)
	if err != nil {
		return Result{}, err
	}
	var data map[string]any
	var runErr error
	_, err = s.mutate(c, z, "shed_exec", "shed_exec: "+shorten(strings.Join(append([]string{in.Cmd}, in.Args...), " ")), func() (Change, error) {
		// The measurement and the commit happen under the repository lock: no other
		// writer of a versioned zone runs between them (exec_quota.go).
		if err := q.measureBefore(); err != nil {
			return Change{}, err
		}
		guard, err := s.guardExec(ctx, c, z) // group zones: ownership kept (groups_guard.go)
		if err != nil {
			return Change{}, err
		}
		data, runErr = s.run(ctx, z, z.Fs, p)
		if data == nil {
			return Change{}, runErr // refused or not started: nothing changed
		}
		return guard.change(Change{All: true, Measured: q.settle}, data), nil
	})
	q.finish()
	if err != nil {
		return Result{}, err
	}
	return execResult(data, runErr)
}

// execResult is the answer of a finished command.
func execResult(data map[string]any, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return Result{Data: data, Message: fmt.Sprintf("%s exited with code %d", data["command"], data["returncode"])}, nil
}

// runIn runs in inside dir, a directory of zone z other than its root (the editzone copy
// of shed_lockedit_exec): the same policy, limits and data as shed_exec, with dir as the
// working directory and the only writable tree; paths are confined to dir. It neither
// commits nor walks the quota (the copy is outside the zone's data until saved).
func (s *Service) runIn(ctx context.Context, z *Zone, dir *confine.Fs, in ExecInput) (map[string]any, error) {
	if in.Cmd == "git" {
		return nil, Errf(CommandForbidden, "git is not available in an edit copy").With("command", "git").
			WithHint("Use git with shed_exec in zone='documents'")
	}
	p, err := s.plan(z, dir, in)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, z, dir, p)
}

// violation maps a policy refusal to the catalogue; its texts never hold host paths.
func violation(v *sandbox.Violation, z *Zone) *Error {
	var e *Error
	switch v.Kind {
	case sandbox.CommandForbidden:
		if h := forbiddenHint(v.Arg, z); h != nil {
			return h
		}
		e = Errf(CommandForbidden, "%s", v.Reason).With("command", v.Arg)
	case sandbox.ArgumentRequired:
		e = Errf(ArgumentRequired, "%s", v.Reason).With("argument", shorten(v.Arg))
	case sandbox.CommandNotFound:
		if h := notFoundHint(v.Arg); h != nil {
			return h
		}
		e = Errf(CommandNotFound, "%s", v.Reason).With("command", v.Arg)
	case sandbox.InvalidPath:
		e = Errf(InvalidPath, "%s", v.Reason).With("path", shorten(v.Arg)).With("zone", z.Label)
	case sandbox.PathEscape:
		if pe, ok := AsError(v.Err); ok {
			return pe // the zone's own path rules (PATH_STARTS_WITH_ZONE, INVALID_PATH)
		}
		e = pathError(v.Err, z, shorten(v.Arg))
		if e.Code == InternalError || e.Code == FileNotFound {
			e = Errf(PathEscape, "%s", v.Reason).With("path", shorten(v.Arg)).With("zone", z.Label)
		}
		return e
	default:
		e = Errf(ArgumentForbidden, "%s", v.Reason).With("argument", shorten(v.Arg))
	}
	if v.Hint != "" {
		e.WithHint("%s", v.Hint)
	}
	return e
}

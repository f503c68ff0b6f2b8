package commands

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/sandbox"
)

// execPlan is a checked command: what the policy produced and how to run it.
type execPlan struct {
	in        ExecInput
	cmd       sandbox.Command
	timeout   time.Duration
	maxOutput int
	// stdoutFile and stderrFile are the clean zone-relative targets ("" = captured).
	stdoutFile, stderrFile string
	// readOnly runs the command with its directory read-only (Spec.ReadOnly);
	// changesNothing says that the kernel guarantees it (or the zone is uploads), so no
	// lock, commit or usage walk is needed.
	readOnly, changesNothing bool
	// operands are the clean zone-relative paths the policy confined (core.Command.Operands).
	operands []string
}

// plan validates the parameters and applies the policy; nothing runs yet.
func (s *Tools) plan(z *core.Zone, dir core.ReadFs, in ExecInput) (*execPlan, error) {
	p := &execPlan{in: in}
	var err error
	if p.timeout, err = s.ExecTimeout(in.Timeout); err != nil {
		return nil, err
	}
	if p.maxOutput, err = s.execMaxOutput(in.MaxOutput); err != nil {
		return nil, err
	}
	if in.RedirectStderrToStdout && in.StderrFile != "" {
		return nil, core.Errf(core.InvalidParameter, "stderr_file and redirect_stderr_to_stdout exclude each other").
			WithHint("Use redirect_stderr_to_stdout=true with stdout_file to save both streams in one file")
	}
	if p.stdoutFile, err = outputFile(z, dir, in.StdoutFile, "stdout_file", in.AllowZoneInPath); err != nil {
		return nil, err
	}
	if p.stderrFile, err = outputFile(z, dir, in.StderrFile, "stderr_file", in.AllowZoneInPath); err != nil {
		return nil, err
	}
	if p.stdoutFile != "" && p.stdoutFile == p.stderrFile {
		return nil, core.Errf(core.InvalidParameter, "stdout_file and stderr_file name the same file").With("path", in.StdoutFile).
			WithHint("Use redirect_stderr_to_stdout=true to save both streams in one file")
	}
	confined := ConfineFn(z, dir, in.AllowZoneInPath)
	req := sandbox.Request{Cmd: in.Cmd, Args: in.Args, Kind: sandbox.ReadWrite, Network: s.Config().NetworkMode,
		StdoutToFile: p.stdoutFile != "", Confine: func(rel string) (string, error) {
			c, err := confined(rel)
			if err == nil {
				p.operands = append(p.operands, c)
			}
			return c, err
		}}
	if z.ReadOnly {
		req.Kind = sandbox.ReadOnly
	}
	if p.cmd, err = sandbox.Prepare(req); err != nil {
		var v *sandbox.Violation
		if errors.As(err, &v) {
			return nil, Violation(v, z)
		}
		return nil, core.Errf(core.InternalError, "Cannot check the command").Because(err)
	}
	// Protected paths (protected.go): refused up front where an operand names one (mkdir -p
	// .git/hooks, cp -r x .git), or reaches through a symlink (cp x lnk, lnk -> .git: a
	// command follows a final link too); what a command makes where no operand shows it (a tar
	// entry) is removed after it (sweepProtected).
	for _, rel := range append(slices.Clone(p.operands), p.stdoutFile, p.stderrFile) {
		if err := core.CheckProtectedTarget(z, dir, rel, rel, true); err != nil {
			return nil, err
		}
	}
	p.readOnly = z.ReadOnly || readsOnly(req)
	pr := sandbox.Detect()
	kernel := sandbox.Mode(s.Config().ExecSandbox) != sandbox.ModeOff && pr.Available
	p.changesNothing = z.Kind == core.Uploads || (p.readOnly && kernel && p.stdoutFile == "" && p.stderrFile == "")
	return p, nil
}

// ExecTimeout clamps the timeout argument (reference §2.6): 0 is the default, negative
// values are refused, larger values are capped at exec_timeout_max.
func (s *Tools) ExecTimeout(t int) (time.Duration, error) {
	if t < 0 {
		return 0, core.Errf(core.InvalidParameter, "timeout must be a positive number of seconds, got %d", t).With("timeout", t).
			WithHint("Omit timeout or use an integer like timeout=30 (max %d)", s.Config().ExecTimeoutMax)
	}
	if t == 0 {
		t = s.Config().ExecTimeoutDefault
	}
	return time.Duration(min(t, s.Config().ExecTimeoutMax)) * time.Second, nil
}

// execMaxOutput clamps max_output: -1 (absent) is max_output_default, 0 is
// max_output_absolute, anything else is capped at max_output_absolute.
func (s *Tools) execMaxOutput(m int) (int, error) {
	switch {
	case m < -1:
		return 0, core.Errf(core.InvalidParameter, "max_output must be -1, 0 or a positive number of characters, got %d", m).
			With("max_output", m).WithHint("Omit max_output or use an integer like max_output=50000")
	case m == -1:
		return min(s.Config().MaxOutputDefault, s.Config().MaxOutputAbsolute), nil
	case m == 0:
		return s.Config().MaxOutputAbsolute, nil
	}
	return min(m, s.Config().MaxOutputAbsolute), nil
}

// outputFile checks stdout_file/stderr_file: refused in uploads, validated like every
// path, confined to dir.
func outputFile(z *core.Zone, dir core.ReadFs, name, param string, allowZone bool) (string, error) {
	if name == "" {
		return "", nil
	}
	if z.ReadOnly {
		return "", core.Errf(core.ZoneReadonly, "Cannot write %s in read-only zone", param).With("zone", z.Label).
			WithHint("Use a writable zone (storage, documents)")
	}
	rel, err := z.Path(name, allowZone)
	if err != nil {
		return "", err
	}
	if rel == "" {
		return "", core.Errf(core.InvalidPath, "%s must name a file, not the zone root", param).With("path", name).
			WithHint("Give a file name such as %s='out.txt'", param)
	}
	if _, err := dir.Confined(rel); err != nil {
		return "", core.PathError(err, z, name)
	}
	return rel, nil
}

// ConfineFn is Request.Confine: the zone's path rules (PATH_STARTS_WITH_ZONE) for
// commands run at the zone root, then the confinement check of dir.
func ConfineFn(z *core.Zone, dir core.ReadFs, allowZone bool) func(string) (string, error) {
	return func(rel string) (string, error) {
		if dir == z.Fs() {
			if _, err := z.Path(rel, allowZone); err != nil {
				if e, ok := core.AsError(err); ok && e.Code == core.PathStartsWithZone {
					return "", e
				}
			}
		}
		return dir.Confined(rel)
	}
}

// ExecData is the data of a shed_exec answer (reference §5.1), also shed_lockedit's exec.
// Its fields are in the order of the JSON keys (alphabetical, as the map it replaces wrote
// them); the optional ones are there only when they apply: hint (a shell operator passed as
// an argument), not_decrypted and not_written_back (an encrypted zone's write-back), path
// (shed_lockedit's working copy), reverted (what the guards put back), the output files
// and their sizes (0 included).
type ExecData struct {
	Args           []string            `json:"args"`
	Command        string              `json:"command"`
	Hint           string              `json:"hint,omitempty"`
	NotDecrypted   []string            `json:"not_decrypted,omitempty"`
	NotWrittenBack []string            `json:"not_written_back,omitempty"`
	OK             bool                `json:"ok"`
	Path           string              `json:"path,omitempty"`
	ReturnCode     int                 `json:"returncode"`
	Reverted       []core.RevertedFile `json:"reverted,omitempty"`
	Sandboxed      bool                `json:"sandboxed"`
	Stderr         string              `json:"stderr"`
	StderrFile     string              `json:"stderr_file,omitempty"`
	StderrFileSize *int64              `json:"stderr_file_size,omitempty"`
	Stdout         string              `json:"stdout"`
	StdoutFile     string              `json:"stdout_file,omitempty"`
	StdoutFileSize *int64              `json:"stdout_file_size,omitempty"`
	Truncated      bool                `json:"truncated"`
	Zone           string              `json:"zone"`
}

// WriteBack writes the mirror m of an encrypted zone back after the command and notes in d
// (when the command ran: d not nil) the files it left out.
func (d *ExecData) WriteBack(m *core.Mirror) error {
	notDecrypted, notWrittenBack, err := m.WriteBack()
	d.leftOut(notDecrypted, notWrittenBack)
	return err
}

// leftOut notes in d (when the command ran: d not nil) the files a write-back left out.
func (d *ExecData) leftOut(notDecrypted, notWrittenBack []string) {
	if d != nil {
		d.NotDecrypted, d.NotWrittenBack = notDecrypted, notWrittenBack
	}
}

// run executes a planned command in dir and builds the data of reference §5.1. data is
// non-nil whenever the command started (even when err reports a timeout or an
// over-quota stdout_file), so the caller commits and accounts what it changed.
func (s *Tools) run(ctx context.Context, z *core.Zone, dir core.ReadFs, p *execPlan) (*ExecData, error) {
	spec := sandbox.Spec{Argv: p.cmd.Argv, Exec: p.cmd.Exec, Network: p.cmd.Network, Dir: dir.Dir(),
		// HOME and TMPDIR are "." (the working directory, i.e. the zone root): the absolute
		// path would show the host layout to `jq -n env` or awk's ENVIRON.
		ReadOnly: p.readOnly, Env: sandbox.BuildEnv("."), Timeout: p.timeout, MaxOutput: p.maxOutput,
		MemoryBytes: int64(s.Config().ExecMemoryLimitMB) << 20, CPUSeconds: int64(s.Config().ExecCPULimitSeconds),
		Mode: sandbox.Mode(s.Config().ExecSandbox), MergeStderr: p.in.RedirectStderrToStdout}
	if p.in.Cmd == "git" {
		r, err := s.Repo(z) // creates the repository the command reads
		if err != nil {
			return nil, err
		}
		r.Release()
		gitDir := core.RepoDir(z.Space)
		spec.Env = append(spec.Env, sandbox.GitEnv(gitDir, dir.Dir())...)
		spec.ExtraRO = []string{gitDir}
	}
	var fileLimit int64
	if !p.changesNothing {
		var err error
		if fileLimit, err = s.fileLimit(ctx, z); err != nil {
			return nil, err
		}
		spec.FileSizeBytes = max(fileLimit, 1) // 0 would mean "no limit"
	}
	var outSink, errSink *core.CommandOutput
	var err error
	if p.stdoutFile != "" {
		if outSink, err = core.StartCommandOutput(dir, p.stdoutFile, fileLimit); err != nil {
			return nil, core.PathError(err, z, p.in.StdoutFile)
		}
		spec.Stdout = outSink
	}
	if p.stderrFile != "" {
		if errSink, err = core.StartCommandOutput(dir, p.stderrFile, fileLimit); err != nil {
			outSink.Abort()
			return nil, core.PathError(err, z, p.in.StderrFile)
		}
		spec.Stderr = errSink
	}
	res, runErr := s.RunSandboxed(ctx, spec)
	// The call's own deadline (an encrypted zone's timeout also covers its copies) ends the
	// command like its timeout.
	res.TimedOut = res.TimedOut || errors.Is(ctx.Err(), context.DeadlineExceeded)
	if runErr != nil {
		outSink.Abort()
		errSink.Abort()
		if errors.Is(runErr, sandbox.ErrSandboxUnavailable) {
			return nil, core.Errf(core.SandboxUnavailable, "Commands are disabled: exec_sandbox is 'required' and this kernel has no Landlock").
				With("command", p.in.Cmd)
		}
		// The launcher's text can hold host paths: it is the cause (logged), never the message.
		return nil, core.Errf(core.ExecError, "Execution error: the command could not be started").With("command", p.in.Cmd).Because(runErr)
	}
	args := p.in.Args
	if args == nil {
		args = []string{}
	}
	data := &ExecData{Args: args, Command: p.in.Cmd, Hint: shellHint(args, res.ExitCode), OK: res.ExitCode == 0 && !res.TimedOut,
		ReturnCode: res.ExitCode, Sandboxed: res.Sandboxed, Stderr: res.Stderr, Stdout: res.Stdout, Truncated: res.Truncated, Zone: z.Name}
	if p.in.RedirectStderrToStdout {
		data.Stderr = ""
	}
	var fileErr error
	if outSink != nil {
		data.Stdout = "[Output written to " + p.stdoutFile + "]"
		data.StdoutFile, data.StdoutFileSize, fileErr = s.finishSink(outSink, z, p.in.StdoutFile, "stdout_file", fileLimit)
	}
	if errSink != nil {
		data.Stderr = "[Errors written to " + p.stderrFile + "]"
		var err error
		if data.StderrFile, data.StderrFileSize, err = s.finishSink(errSink, z, p.in.StderrFile, "stderr_file", fileLimit); fileErr == nil {
			fileErr = err
		}
	}
	if res.TimedOut {
		return data, core.Errf(core.Timeout, "Command timeout after %ds", int(p.timeout/time.Second)).With("command", p.in.Cmd).
			With("timeout", int(p.timeout/time.Second)).With("stdout", data.Stdout).With("stderr", data.Stderr).
			WithHint("Increase timeout (max: %ds), or split the work", s.Config().ExecTimeoutMax)
	}
	return data, fileErr
}

// fileLimit is the largest file a command may write: the owner's remaining quota,
// at most max_file_size_mb.
func (s *Tools) fileLimit(ctx context.Context, z *core.Zone) (int64, error) {
	left, err := s.RemainingQuota(ctx, z)
	return min(left.Bytes, int64(s.Config().MaxFileSizeMB)<<20), err
}

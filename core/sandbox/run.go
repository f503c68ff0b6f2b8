package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fileshed/fileshed/core/sandbox/launch"
	"golang.org/x/sys/unix"
)

// Mode is the exec_sandbox valve.
type Mode string

// Modes of the kernel layer.
const (
	ModeRequired   Mode = "required"    // refuse to run without Landlock
	ModeBestEffort Mode = "best_effort" // Landlock where available, rlimits and hygiene always
	ModeOff        Mode = "off"         // no Landlock (rlimits and hygiene still apply)
)

// DefaultMaxOutput is the capture size when Spec.MaxOutput is 0 (max_output_default).
const DefaultMaxOutput = 50000

// Spec is one command to run.
type Spec struct {
	Argv []string // from Prepare: Argv[0] absolute
	Exec []string // from Prepare: helper programs the command may execute
	// Dir is the working directory and the only writable tree (the zone root, or
	// the editzone copy's directory for lockedit). ReadOnly makes it read-only too
	// (uploads).
	Dir      string
	ReadOnly bool
	ExtraRW  []string // more writable trees (normally none)
	ExtraRO  []string // more readable trees (the git directory for git)
	Env      []string // the whole environment: BuildEnv (+ GitEnv)
	Timeout  time.Duration
	// MaxOutput caps each captured stream in bytes (head and tail are kept).
	MaxOutput int
	// rlimits, 0 = none. FileSizeBytes should be the remaining quota.
	MemoryBytes, CPUSeconds, FileSizeBytes int64
	Network                                bool // allow TCP connect (curl in safe/all mode)
	Mode                                   Mode
	// Stdout and Stderr, when set, receive the stream instead of the capture (an
	// *os.File is handed to the command directly, so RLIMIT_FSIZE applies to it).
	Stdout, Stderr io.Writer
	// MergeStderr sends stderr where stdout goes (redirect_stderr_to_stdout): one
	// stream, in the order the command wrote it.
	MergeStderr bool
	// Stdin, when set, is the command's standard input (the read end of a pipe its caller
	// feeds: the PDF text of shed_search reads a decrypted file so, never from disk); nil
	// is /dev/null.
	Stdin *os.File
}

// Result is what a command did.
type Result struct {
	Stdout, Stderr             string
	StdoutBinary, StderrBinary bool
	Truncated                  bool // some captured output was omitted
	TimedOut                   bool
	ExitCode                   int  // exit status; -N when killed by signal N
	Sandboxed                  bool // Landlock was applied
}

// Run starts s through the launcher (package launch: the small launcher, or this
// binary re-executed with LauncherArg) and returns when the launcher reports that
// the command and every process it started are gone (at the timeout or when ctx
// ends, it closes the spec pipe, on which the launcher kills them all). The error is only for failures to launch (ErrSandboxUnavailable,
// a Landlock or exec failure); a command that fails or times out is a Result.
// Launch error texts may contain host paths: log them, do not show them.
func Run(ctx context.Context, s Spec) (Result, error) {
	if len(s.Argv) == 0 || s.Dir == "" {
		return Result{}, errors.New("sandbox: empty argv or dir")
	}
	pr := Detect()
	useLandlock := s.Mode != ModeOff && pr.Available
	if s.Mode == ModeRequired && !pr.Available {
		return Result{}, ErrSandboxUnavailable
	}
	self, err := launcher()
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	ls := launch.Spec{Argv: s.Argv, Dir: s.Dir, ReadOnly: s.ReadOnly,
		ExtraRW: s.ExtraRW, ExtraRO: s.ExtraRO, Memory: s.MemoryBytes, CPU: s.CPUSeconds,
		FileSize: s.FileSizeBytes, Network: s.Network, Landlock: useLandlock, ABI: pr.LandlockABI}
	if useLandlock {
		ls.Exec = executables(append([]string{s.Argv[0]}, s.Exec...), envPath(s.Env))
	}
	spec := ls.Encode()
	specR, specW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	defer specW.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		specR.Close()
		return Result{}, err
	}
	defer statusR.Close()

	max := s.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	outCap, errCap := newCapture(max), newCapture(max)
	out, err := newStream(writerOr(s.Stdout, outCap))
	if err != nil {
		specR.Close()
		statusW.Close()
		return Result{}, err
	}
	errOut := out
	if !s.MergeStderr {
		if errOut, err = newStream(writerOr(s.Stderr, errCap)); err != nil {
			specR.Close()
			statusW.Close()
			out.close()
			return Result{}, err
		}
	}
	cmd := exec.Command(self, launch.Arg)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never inherit the server's environment
	}
	cmd.Stdin = nil // /dev/null
	if s.Stdin != nil {
		cmd.Stdin = s.Stdin
	}
	cmd.Stdout, cmd.Stderr = out.child, errOut.child
	cmd.ExtraFiles = []*os.File{specR, statusW} // launch.SpecFD, launch.StatusFD
	// The spec pipe stays open for the whole call: its EOF tells the launcher to kill the
	// command and every process it started: closed by stop, or by the kernel when the
	// server dies (kill -9, OOM), when nothing else is left to enforce the timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	specR.Close()
	statusW.Close()
	out.started()
	errOut.started()
	if err != nil {
		out.close()
		errOut.close()
		return Result{}, fmt.Errorf("sandbox: start launcher: %w", err)
	}
	pid := cmd.Process.Pid
	// The launcher is never reaped before this: its pid, the group id, cannot be reused.
	killGroup := func() { _ = unix.Kill(-pid, unix.SIGKILL) }
	_, werr := specW.Write(append(fmt.Appendf(nil, "%0*d", launch.SpecLenDigits, len(spec)), spec...))
	status := bufio.NewReaderSize(io.LimitReader(statusR, 4096), 4096)
	if line, _ := status.ReadString('\n'); werr != nil || line != launch.StatusStarted {
		killGroup()
		_ = cmd.Wait()
		out.close()
		errOut.close()
		return Result{}, fmt.Errorf("sandbox: launch failed: %s", line)
	}

	// The launcher's last line comes once the command and every process it started are
	// gone and it has closed its output: the call is over. The launcher's own exit (a Go
	// runtime tearing down) is not waited for.
	final := make(chan string, 1)
	go func() {
		line, _ := status.ReadString('\n')
		final <- line
	}()
	stop := func() string {
		// EOF on the spec pipe: the launcher kills the command and all its descendants,
		// reaps them and reports; SIGKILL to the group if it does not within stopGrace.
		specW.Close()
		select {
		case line := <-final:
			return line
		case <-time.After(stopGrace):
			killGroup()
			return <-final
		}
	}
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	res := Result{Sandboxed: useLandlock}
	var line string
	select {
	case line = <-final:
	case <-timeout:
		res.TimedOut = true
		line = stop()
	case <-ctx.Done():
		line = stop()
	}
	if ws, err := strconv.ParseUint(strings.TrimSuffix(line, "\n"), 10, 32); err == nil && strings.HasSuffix(line, "\n") {
		res.ExitCode = waitCode(syscall.WaitStatus(ws))
		go func() { _ = cmd.Wait() }()
	} else {
		// No report: the launcher died (killed); what is left of its group dies now.
		killGroup()
		_ = cmd.Wait()
		res.ExitCode = exitCode(cmd.ProcessState)
	}
	out.wait()
	errOut.wait()
	var tr1, tr2 bool
	if s.Stdout == nil {
		res.Stdout, res.StdoutBinary, tr1 = outCap.result()
	}
	if s.Stderr == nil {
		res.Stderr, res.StderrBinary, tr2 = errCap.result()
	}
	res.Truncated = tr1 || tr2
	return res, nil
}

// LauncherName is the small launcher binary (cmd/fileshed-sandbox) that Run starts
// when it sits next to the executable: it runs the same launch.Main without the
// server's package initialisation (several milliseconds per command for the full
// server). Without it, Run re-executes the executable itself with LauncherArg.
const LauncherName = "fileshed-sandbox"

// launcher returns the program Run starts. Looked up on every call (one stat), so that
// installing or removing the small launcher needs no restart.
func launcher() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	small := filepath.Join(filepath.Dir(self), LauncherName)
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return small, nil
	}
	return self, nil
}

func writerOr(w io.Writer, c *capture) io.Writer {
	if w != nil {
		return w
	}
	return c
}

// stopGrace is how long Run waits for the launcher to clean up after SIGTERM.
const stopGrace = 3 * time.Second

// drainGrace bounds the wait for the end of the output once the launcher reported: a
// process that escaped the cleanup (stuck in the kernel) cannot hold the call.
const drainGrace = time.Second

// stream is one output of the command: the file it writes to, and, when the
// destination is not a file, a pipe whose read end is copied into it until EOF.
type stream struct {
	child *os.File      // what the launcher gets as stdout or stderr
	r     *os.File      // the read end (nil when child is the destination itself)
	done  chan struct{} // closed when the copy has ended
}

func newStream(w io.Writer) (*stream, error) {
	if f, ok := w.(*os.File); ok {
		return &stream{child: f}, nil // RLIMIT_FSIZE applies to the command's writes
	}
	r, child, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	st := &stream{child: child, r: r, done: make(chan struct{})}
	go func() {
		_, _ = io.Copy(w, r)
		// A destination that stops accepting (stdout_file over the quota) ends the
		// stream: the command's next write fails (EPIPE) instead of blocking.
		r.Close()
		close(st.done)
	}()
	return st, nil
}

// started drops the server's copy of the pipe's write end (the launcher has its own).
func (st *stream) started() {
	if st.r != nil {
		st.child.Close()
	}
}

// wait waits for the copy to reach EOF (at most drainGrace), then closes the read end.
func (st *stream) wait() {
	if st.r == nil {
		return
	}
	select {
	case <-st.done:
	case <-time.After(drainGrace):
	}
	st.close()
}

// close ends the copy now.
func (st *stream) close() {
	if st.r != nil {
		st.child.Close()
		st.r.Close()
		<-st.done
	}
}

// exitCode is the launcher's own status: used when it reported no command status
// (it was killed).
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return waitCode(ws)
	}
	return ps.ExitCode()
}

// waitCode is the exit status, or -signal when the process was killed.
func waitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return -int(ws.Signal())
	}
	return ws.ExitStatus()
}

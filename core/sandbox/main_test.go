package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	confinefs "github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/internal/testtool"
)

// TestMain makes the test binary its own launcher, as main.go does for the server.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		os.Exit(LauncherMain(os.Args[2:]))
	}
	if dir := os.Getenv(orphanServerEnv); dir != "" {
		os.Exit(orphanServer(dir))
	}
	// A secret in the server's environment that no command may ever see.
	os.Setenv("FILESHED_SECRET", "s3cr3t-value-42")
	// Four tests at a time: most wait on a command's timeout (measured: 2.3 s for the
	// package where the two cores' default took 4.0 s).
	testtool.ParallelAtLeast(4)
	os.Exit(m.Run())
}

// confineIn is the zone check core passes as Request.Confine: confine.Fs.Confined
// of the zone directory, as in production.
func confineIn(root string) func(string) (string, error) {
	return func(rel string) (string, error) {
		fs, err := confinefs.New(root)
		if err != nil {
			return "", err
		}
		defer fs.Close()
		return fs.Confined(rel)
	}
}

// zone makes a zone directory with a few files and returns its resolved path.
func zone(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "a.txt"), "hello\nworld\n")
	return d
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// spec builds a Spec for argv in dir with test defaults.
func spec(dir string, argv ...string) Spec {
	return Spec{Argv: argv, Dir: dir, Env: BuildEnv("."), Timeout: 20 * time.Second,
		MemoryBytes: 1 << 30, CPUSeconds: 30, Mode: ModeBestEffort}
}

// run prepares and runs a command in a zone like core will.
func run(t *testing.T, dir string, kind ZoneKind, network string, cmd string, args ...string) (Result, error) {
	t.Helper()
	testtool.Require(t, cmd)
	c, err := Prepare(Request{Cmd: cmd, Args: args, Kind: kind, Network: network, Confine: confineIn(dir)})
	if err != nil {
		return Result{}, err
	}
	s := spec(dir, c.Argv...)
	s.Exec, s.Network, s.ReadOnly = c.Exec, c.Network, kind == ReadOnly
	return Run(context.Background(), s)
}

// needLandlock skips kernel-specific assertions where Landlock is unavailable.
func needLandlock(t *testing.T) {
	t.Helper()
	if !Detect().Available {
		t.Skip("Landlock unavailable: " + Detect().Reason)
	}
}

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// orphanServerEnv makes the test binary play a server that runs one long command (see
// TestMain), so that the test can kill it with SIGKILL.
const orphanServerEnv = "FILESHED_TEST_ORPHAN_SERVER"

// orphanArgEnv carries the sleep duration that marks this run's command in /proc (unique
// per run, so a leftover of another run is never mistaken for it).
const orphanArgEnv = "FILESHED_TEST_ORPHAN_ARG"

func orphanServer(dir string) int {
	c, err := Prepare(Request{Cmd: "sleep", Args: []string{os.Getenv(orphanArgEnv)}, Kind: ReadWrite, Confine: confineIn(dir)})
	if err != nil {
		return 2
	}
	s := spec(dir, c.Argv...)
	s.Exec, s.Timeout = c.Exec, time.Minute
	_, _ = Run(context.Background(), s)
	return 0
}

// sleeping reports whether a process runs `sleep -- arg`.
func sleeping(t *testing.T, arg string) bool {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("sleep\x00")) && bytes.HasSuffix(b, []byte("\x00"+arg+"\x00")) {
			return true
		}
	}
	return false
}

// TestCommandDiesWithTheServer: when the server is killed with SIGKILL, the command it was
// running does not survive as an orphan outside every timeout.
func TestCommandDiesWithTheServer(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	arg := fmt.Sprintf("47.%06d", time.Now().UnixNano()%1_000_000)
	srv := exec.Command(self, "-test.run=^$")
	srv.Env = append(os.Environ(), orphanServerEnv+"="+zone(t), orphanArgEnv+"="+arg)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for !sleeping(t, arg) {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for sleeping(t, arg) {
		if time.Now().After(deadline) {
			t.Fatal("the command outlived the killed server")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

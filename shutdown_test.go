package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fileshed/fileshed/internal/pgtest"
	"github.com/fileshed/fileshed/internal/replicatest"
	"github.com/fileshed/fileshed/internal/testtool"
)

func TestMain(m *testing.M) {
	// The replicas end-to-end tests mostly wait (slow imports, a killed replica's lease):
	// four parallel tests at a time let the rules' type-checking and the binary's tests run
	// beside them on two cores (issue 34).
	testtool.ParallelAtLeast(4)
	code := pgtest.Run(m) // the tests, then the private PostgreSQL the replicas tests started is stopped
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the server once per test run (beside its launcher, as the image lays it out).
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fileshed-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = replicatest.Build(dir)
		if binErr != nil {
			os.RemoveAll(dir)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// server is a running binary with its log.
type server struct {
	cmd  *exec.Cmd
	addr string
	logs *bytes.Buffer
	done chan error
}

// serveBinary starts the built server on a free loopback port with extra FILESHED_* vars.
func serveBinary(t *testing.T, env ...string) *server {
	t.Helper()
	return serveBinaryOn(t, t.TempDir(), env...)
}

// serveBinaryOn is serveBinary on a given storage directory.
func serveBinaryOn(t *testing.T, storage string, env ...string) *server {
	t.Helper()
	bin := binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--listen", addr, "--storage-base-path", storage)
	cmd.Env = append(os.Environ(), env...)
	s := &server{cmd: cmd, addr: addr, logs: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start: %s", s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startSleep runs `shed_exec sleep <secs>` in the background and waits until it runs.
func (s *server) startSleep(t *testing.T, secs string) chan string {
	t.Helper()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+s.addr+"/shed_exec", "application/json",
			strings.NewReader(`{"zone":"storage","cmd":"sleep","args":["`+secs+`"],"timeout":60}`))
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		answer <- b.String()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !sleeping(secs) {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start: %s", s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return answer
}

// sleeping reports whether a process `sleep secs` exists on this machine.
func sleeping(secs string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if err == nil && filepath.Base(args[0]) == "sleep" && args[len(args)-1] == secs {
			return true
		}
	}
	return false
}

// On SIGTERM a running command gets the grace period, then it is killed, its call answers,
// and the server exits 0 with no process left behind.
func TestShutdownKillsCommandsAfterGrace(t *testing.T) {
	s := serveBinary(t, "FILESHED_SHUTDOWN_GRACE_SECONDS=1")
	answer := s.startSleep(t, "41.5")
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.logs)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the server did not stop after the grace period:\n%s", s.logs)
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("stopped after %s, before the 1 s grace", took)
	}
	select {
	case a := <-answer:
		if strings.Contains(a, `"returncode":0`) {
			t.Fatalf("the killed command reported success: %s", a)
		}
		t.Logf("answer: %s", a)
	case <-time.After(5 * time.Second):
		t.Fatal("the call never answered")
	}
	if sleeping("41.5") {
		t.Fatalf("the command outlived the server:\n%s", s.logs)
	}
	if !strings.Contains(s.logs.String(), "grace period over") {
		t.Fatalf("the log should say the grace ran out:\n%s", s.logs)
	}
}

// A second signal exits at once, without waiting for the grace period.
func TestShutdownSecondSignalExitsAtOnce(t *testing.T) {
	s := serveBinary(t, "FILESHED_SHUTDOWN_GRACE_SECONDS=60")
	s.startSleep(t, "42.5")
	s.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err == nil {
			t.Fatal("a forced exit should not report success")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the second signal did not stop the server:\n%s", s.logs)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("second signal took %s", took)
	}
	deadline := time.Now().Add(3 * time.Second) // Pdeathsig kills the command with the server
	for sleeping("42.5") {
		if time.Now().After(deadline) {
			t.Fatal("the command outlived the server")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

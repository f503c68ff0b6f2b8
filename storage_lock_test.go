package main

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A second server started on the storage directory of a running one exits at once, naming
// the directory and the way to run several (issue 25: three servers on one SQLite state
// lost acknowledged writes); the first one keeps serving.
func TestSecondServerExitsAtOnce(t *testing.T) {
	storage := t.TempDir()
	first := serveBinaryOn(t, storage)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(binary(t), "--listen", addr, "--storage-base-path", storage)
	cmd.Stderr = &stderr
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the second server did not exit: %s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("second server: %v, stderr %q", err, stderr.String())
	}
	for _, want := range []string{storage, "state.driver: postgres"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not name %q", stderr.String(), want)
		}
	}
	t.Logf("refused in %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
	resp, err := http.Get("http://" + first.addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first server stopped serving: %v", err)
	}
	resp.Body.Close()
}

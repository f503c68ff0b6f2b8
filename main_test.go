package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestValvesCommandRedactsSecrets(t *testing.T) {
	t.Setenv("FILESHED_AUTH_API_KEY", "very-secret-key-0123")
	var out, errb bytes.Buffer
	if code := run([]string{"valves"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(out.String(), "very-secret-key-0123") || !strings.Contains(out.String(), "auth.api_key") {
		t.Fatalf("valves output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "env") {
		t.Fatalf("sources missing:\n%s", out.String())
	}
}

func TestOpenAPICommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"openapi"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["paths"].(map[string]any)["/shed_tree"] == nil {
		t.Fatalf("not the spec: %v %s", err, out.String()[:min(out.Len(), 200)])
	}
}

func TestStartupRefusals(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, 1, "unknown command"},
		{"unknown flag", []string{"--nope", "1"}, 2, "nope"},
		{"bad valve", []string{"--auth-mode", "open"}, 2, "auth.mode"},
		{"none mode on a public address", []string{"--listen", "0.0.0.0:0", "--storage-base-path", t.TempDir()}, 2, "allow_insecure_none"},
		{"every origin with none on a public address", []string{"--listen", "0.0.0.0:0", "--auth-allow-insecure-none", "--cors-allowed-origins", "*",
			"--storage-base-path", t.TempDir()}, 2, "cors.allowed_origins"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q", code, errb.String())
			}
		})
	}
}

// TestBinaryEndToEnd builds the real binary as the image does (commit given with -X), serves
// with embedded defaults (mode none on loopback), calls a tool over HTTP, probes it with
// `fileshed healthcheck` and `healthcheck --ready`, and stops it with SIGTERM (graceful exit 0).
func TestBinaryEndToEnd(t *testing.T) {
	t.Parallel() // owns its binary, its process and its folder
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fileshed")
	// The image's build: the commit comes as -X main.commit (the Dockerfile's COMMIT argument).
	if out, err := exec.Command("go", "build", "-ldflags=-X main.commit=e2e0c0mmit", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), " commit e2e0c0mmit ") {
		t.Fatalf("version: %v %q", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--listen", addr)
	cmd.Dir = dir // storage_base_path ./data is relative to the working directory
	cmd.Env = append(os.Environ(), "FILESHED_LOG_LEVEL=warn")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Post("http://"+addr+"/shed_tree", "application/json", strings.NewReader(`{"zone":"storage"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"success":true`) {
		t.Fatalf("shed_tree: %s", body)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "fileshed.sqlite")); err != nil {
		t.Fatalf("state database not in ./data: %v", err)
	}
	for _, probe := range [][]string{{"healthcheck"}, {"healthcheck", "--ready"}} {
		hc := exec.Command(bin, append(probe, "--listen", addr)...)
		if out, err := hc.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", probe, err, out)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no graceful stop")
	}
	if strings.Contains(logs.String(), "panic") {
		t.Fatalf("logs: %s", logs.String())
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, want := range []string{"Usage:", "fileshed version", "fileshed valves", "FILESHED_", "--listen", "Linux"} {
			if !strings.Contains(out.String(), want) {
				t.Fatalf("%v: help lacks %q:\n%s", args, want, out.String())
			}
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), "fileshed ") || !strings.Contains(out.String(), "go1.") {
			t.Fatalf("%v: %q", args, out.String())
		}
	}
}

// TestPortInUse: a port already taken is a clear error naming the variable to change, and
// leaves no fresh storage directory behind (the listener is bound before storage is made).
func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	var out, errb bytes.Buffer
	code := run([]string{"--listen", ln.Addr().String(), "--storage-base-path", data}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "already in use") || !strings.Contains(errb.String(), "FILESHED_LISTEN") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("storage directory created although the server could not start: %v", err)
	}
}

// TestInsecureNoneNamesEnvironment: a container user sets FILESHED_* variables, so the
// refusal of mode none on 0.0.0.0 names them, not only the valve keys.
func TestInsecureNoneNamesEnvironment(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"--listen", "0.0.0.0:0", "--storage-base-path", t.TempDir()}, &out, &errb)
	for _, want := range []string{"FILESHED_AUTH_MODE", "FILESHED_AUTH_ALLOW_INSECURE_NONE=true", "auth.allow_insecure_none"} {
		if code == 0 || !strings.Contains(errb.String(), want) {
			t.Fatalf("exit %d, stderr lacks %q: %q", code, want, errb.String())
		}
	}
}

// TestConfigErrorsNameEnvironment: a valve error names the FILESHED_* variable to set.
func TestConfigErrorsNameEnvironment(t *testing.T) {
	t.Setenv("FILESHED_AUTH_MODE", "jwt")
	var out, errb bytes.Buffer
	code := run([]string{"--storage-base-path", t.TempDir()}, &out, &errb)
	for _, want := range []string{"auth.jwt_secret", "FILESHED_AUTH_JWT_SECRET", "FILESHED_AUTH_API_KEY"} {
		if code != 2 || !strings.Contains(errb.String(), want) {
			t.Fatalf("exit %d, stderr lacks %q: %q", code, want, errb.String())
		}
	}
}

// TestHealthcheckReady: `fileshed healthcheck` probes /healthz (alive), `healthcheck --ready`
// probes /readyz, so that the image's HEALTHCHECK reports unhealthy a server that answers but
// refuses every command (Landlock blocked, storage read-only); the refusal says why.
func TestHealthcheckReady(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			w.Write([]byte(`{"success":true,"message":"ok"}`))
		case "/readyz":
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"success":false,"data":{"sandbox":{"ready":false},"storage":"writable"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var out, errb bytes.Buffer
	if code := run([]string{"healthcheck", "--listen", addr}, &out, &errb); code != 0 {
		t.Fatalf("healthcheck: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	code := run([]string{"healthcheck", "--ready", "--listen", addr}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "/readyz answered 503") || !strings.Contains(errb.String(), `"ready":false`) {
		t.Fatalf("healthcheck --ready: exit %d: %s", code, errb.String())
	}
	// A server listening on every interface is probed on loopback.
	_, port, _ := net.SplitHostPort(addr)
	errb.Reset()
	if code := run([]string{"healthcheck", "--listen", "0.0.0.0:" + port, "--auth-mode", "headers", "--auth-api-key", "0123456789abcdef"}, &out, &errb); code != 0 {
		t.Fatalf("healthcheck on 0.0.0.0: exit %d: %s", code, errb.String())
	}
}

// TestVersionNamesTheCommitGivenAtBuild: a build without .git (the image's) names the
// commit passed with -ldflags "-X main.commit=..." (the Dockerfile's COMMIT argument).
func TestVersionNamesTheCommitGivenAtBuild(t *testing.T) {
	defer func(old string) { commit = old }(commit)
	commit = "0123456789abcdef0123"
	if v := versionText(); !strings.Contains(v, " commit 0123456789ab ") {
		t.Fatalf("version %q does not name the commit", v)
	}
}

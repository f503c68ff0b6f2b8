package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/internal/testtool"
)

const execDir = "users/local/Storage/data/"

// execCall is one shed_exec body.
type execCall map[string]any

func runExec(e *env, body execCall) reply {
	e.t.Helper()
	testtool.Require(e.t, fmt.Sprint(body["cmd"]))
	return e.post("shed_exec", body, nil)
}

func TestExecRunsCommandInZone(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+"a.txt", "alpha\nbeta\n")
	r := runExec(e, execCall{"zone": "storage", "cmd": "cat", "args": []string{"a.txt"}})
	wantOK(t, r)
	if r.Data["stdout"] != "alpha\nbeta\n" || r.Data["returncode"] != 0.0 || r.Data["ok"] != true ||
		r.Data["zone"] != "Storage" || r.Data["command"] != "cat" || r.Data["truncated"] != false {
		t.Fatalf("data: %v", r.Data)
	}
	if r.Data["sandboxed"] != sandbox.Detect().Available {
		t.Fatalf("sandboxed=%v, Landlock available=%v", r.Data["sandboxed"], sandbox.Detect().Available)
	}
	// A failing command is still success=true: its status is data.returncode.
	r = runExec(e, execCall{"zone": "storage", "cmd": "grep", "args": []string{"zzz", "a.txt"}})
	wantOK(t, r)
	if r.Data["returncode"] != 1.0 || r.Data["ok"] != false {
		t.Fatalf("grep without match: %v", r.Data)
	}
	// Shell metacharacters are plain characters without a shell.
	r = runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{"a | b; $(id) `x` > y"}})
	wantOK(t, r)
	if r.Data["stdout"] != "a | b; $(id) `x` > y\n" {
		t.Fatalf("echo: %v", r.Data["stdout"])
	}
	// Args sent as a JSON string (models do) are parsed.
	r = e.post("shed_exec", `{"zone":"storage","cmd":"wc","args":"[\"-l\",\"a.txt\"]","timeout":"5"}`, nil)
	wantOK(t, r)
	if !strings.HasPrefix(r.Data["stdout"].(string), "2 ") {
		t.Fatalf("wc: %v", r.Data)
	}
}

// TestExecRefusesHostile covers the policy layer through HTTP: every case is either
// refused with its code or runs fully contained (checked by the output).
func TestExecRefusesHostile(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+"a.txt", "alpha\n")
	e.write("users/other/Storage/data/secret.txt", "other-user-secret\n")
	if err := os.Symlink("../../../other/Storage/data/secret.txt", filepath.Join(e.base, execDir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(e.base, execDir, "etc")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, zone, cmd string
		args            []string
		code            string // "" = runs, contained
		notInOutput     string
	}{
		{"awk system()", "storage", "awk", []string{`BEGIN{system("id")}`}, "", "uid="},
		{"awk pipe to sh", "storage", "awk", []string{`BEGIN{print "id" | "sh"}`}, "", "uid="},
		{"awk getline pipe", "storage", "awk", []string{`BEGIN{"id" | getline x; print x}`}, "", "uid="},
		{"sed e command", "storage", "sed", []string{"1e id", "a.txt"}, "", "uid="},
		{"sed s///e", "storage", "sed", []string{"s/.*/id/e", "a.txt"}, "", "uid="},
		{"sed w outside", "storage", "sed", []string{"w /tmp/pwned", "a.txt"}, "", ""},
		{"tar checkpoint-action abbreviated", "storage", "tar", []string{"-cf", "x.tar", "--checkpoint=1", "--checkpoint-ac=exec=id", "a.txt"}, "ARGUMENT_FORBIDDEN", ""},
		{"tar to-command", "storage", "tar", []string{"-xf", "x.tar", "--to-command=id"}, "ARGUMENT_FORBIDDEN", ""},
		{"tar -P", "storage", "tar", []string{"-cPf", "x.tar", "a.txt"}, "ARGUMENT_FORBIDDEN", ""},
		{"find -exec", "storage", "find", []string{".", "-exec", "id", ";"}, "ARGUMENT_FORBIDDEN", ""},
		{"find -execdir", "storage", "find", []string{".", "-execdir", "id", ";"}, "ARGUMENT_FORBIDDEN", ""},
		{"find -delete in uploads", "uploads", "find", []string{".", "-delete"}, "ARGUMENT_FORBIDDEN", ""},
		{"sort compress-program", "storage", "sort", []string{"--compress-program=sh", "a.txt"}, "ARGUMENT_FORBIDDEN", ""},
		{"sort -o absolute", "storage", "sort", []string{"-o", "/tmp/x", "a.txt"}, "PATH_ESCAPE", ""},
		{"split --filter", "storage", "split", []string{"--filter=sh", "a.txt"}, "ARGUMENT_FORBIDDEN", ""},
		{"uniq output escapes", "storage", "uniq", []string{"a.txt", "../../x"}, "PATH_ESCAPE", ""},
		{"zip -TT", "storage", "zip", []string{"-TT", "id", "x.zip", "a.txt"}, "ARGUMENT_FORBIDDEN", ""},
		{"grep -f attached absolute", "storage", "grep", []string{"-f/etc/passwd", "a.txt"}, "PATH_ESCAPE", ""},
		{"cat proc environ", "storage", "cat", []string{"/proc/self/environ"}, "PATH_ESCAPE", ""},
		{"cat dotdot", "storage", "cat", []string{"../../../other/Storage/data/secret.txt"}, "PATH_ESCAPE", ""},
		{"cat symlink to other user", "storage", "cat", []string{"link"}, "PATH_ESCAPE", ""},
		{"cat through dir symlink", "storage", "cat", []string{"etc/passwd"}, "PATH_ESCAPE", ""},
		{"zone name prefix", "storage", "cat", []string{"storage/a.txt"}, "PATH_STARTS_WITH_ZONE", ""},
		{"NUL in path", "storage", "cat", []string{"a\x00.txt"}, "INVALID_PATH", ""},
		{"not whitelisted", "storage", "bash", []string{"-c", "id"}, "COMMAND_FORBIDDEN", ""},
		{"read-write command in uploads", "uploads", "rm", []string{"x"}, "COMMAND_FORBIDDEN", ""},
		{"path as command", "storage", "/bin/sh", nil, "COMMAND_FORBIDDEN", ""},
		{"git commit", "documents", "git", []string{"commit", "-m", "x"}, "COMMAND_FORBIDDEN", ""},
		{"git -c fsmonitor", "documents", "git", []string{"-c", "core.fsmonitor=id", "status"}, "ARGUMENT_FORBIDDEN", ""},
		{"git grep -O", "documents", "git", []string{"grep", "-Oid", "x"}, "ARGUMENT_FORBIDDEN", ""},
		{"git log output escapes", "documents", "git", []string{"log", "--output=../x"}, "PATH_ESCAPE", ""},
		{"git diff no-index", "documents", "git", []string{"diff", "--no-index", "/etc/passwd", "x"}, "ARGUMENT_FORBIDDEN", ""},
		{"git in storage", "storage", "git", []string{"status"}, "COMMAND_FORBIDDEN", ""},
		{"curl with network disabled", "storage", "curl", []string{"-o", "x", "https://example.com"}, "COMMAND_FORBIDDEN", ""},
		{"cat without operand", "storage", "cat", nil, "ARGUMENT_REQUIRED", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runExec(e, execCall{"zone": c.zone, "cmd": c.cmd, "args": c.args})
			if c.code != "" {
				wantError(t, r, c.code)
				return
			}
			wantOK(t, r)
			if c.notInOutput != "" && strings.Contains(r.raw, c.notInOutput) {
				t.Fatalf("escaped: %s", r.raw)
			}
			if r.Data["returncode"] == 0.0 {
				t.Fatalf("the sandboxed interpreter accepted it: %s", r.raw)
			}
		})
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Fatal("sed w wrote outside the zone")
	}
}

func TestExecNetworkSafeMode(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_NETWORK_MODE": "safe"})
	for name, args := range map[string][]string{
		"file URL":           {"-o", "x", "file:///etc/passwd"},
		"metadata endpoint":  {"-o", "x", "http://169.254.169.254/latest/meta-data/"},
		"loopback":           {"-o", "x", "http://127.0.0.1:1/"},
		"output outside":     {"-o", "/tmp/x", "https://example.com/"},
		"upload in get mode": {"-o", "x", "-d", "@a.txt", "https://example.com/"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runExec(e, execCall{"zone": "storage", "cmd": "curl", "args": args})
			if r.Success {
				t.Fatalf("curl ran: %s", r.raw)
			}
			if r.Error != "ARGUMENT_FORBIDDEN" && r.Error != "PATH_ESCAPE" {
				t.Fatalf("code %s: %s", r.Error, r.raw)
			}
		})
	}
	wantError(t, runExec(e, execCall{"zone": "storage", "cmd": "curl", "args": []string{"https://example.com/"}}), "ARGUMENT_REQUIRED")
}

func TestExecEnvironmentHasNoSecrets(t *testing.T) {
	t.Setenv("FILESHED_AUTH_API_KEY", "k3y-that-must-not-leak")
	e := start(t, nil)
	r := runExec(e, execCall{"zone": "storage", "cmd": "jq", "args": []string{"-n", "env"}})
	wantOK(t, r)
	out := r.Data["stdout"].(string)
	if strings.Contains(out, "FILESHED") || strings.Contains(out, "k3y") || strings.Contains(out, e.base) || !strings.Contains(out, `"PATH"`) {
		t.Fatalf("environment: %s", out)
	}
}

func TestExecTimeoutKillsCommand(t *testing.T) {
	t.Parallel() // owns its server; the bound is 4 s over the timeout (issue 34)
	e := start(t, nil)
	t0 := time.Now()
	r := runExec(e, execCall{"zone": "storage", "cmd": "sleep", "args": []string{"999"}, "timeout": 1})
	wantError(t, r, "TIMEOUT")
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if r.Details["timeout"] != 1.0 || r.Details["command"] != "sleep" {
		t.Fatalf("details: %v", r.Details)
	}
	// The timeout is capped at exec_timeout_max, bad values refused with usage.
	for _, body := range []string{`{"zone":"storage","cmd":"true","timeout":-1}`, `{"zone":"storage","cmd":"true","timeout":"soon"}`,
		`{"zone":"storage","cmd":"true","max_output":-5}`} {
		r := e.post("shed_exec", body, nil)
		wantError(t, r, "INVALID_PARAMETER")
		if r.Usage == "" {
			t.Fatalf("no usage: %s", r.raw)
		}
	}
}

func TestExecOutputFloodIsBounded(t *testing.T) {
	t.Parallel() // owns its server; no clock (issue 34)
	e := start(t, nil)
	// yes never ends: the timeout kills it, the captured output stays bounded.
	r := runExec(e, execCall{"zone": "storage", "cmd": "yes", "timeout": 1, "max_output": 1000})
	wantError(t, r, "TIMEOUT")
	if out, _ := r.Details["stdout"].(string); len(out) > 1200 || !strings.Contains(out, " cut ...]") {
		t.Fatalf("stdout of yes: %d bytes", len(out))
	}
	// 20 MB of output: head and tail kept, marked truncated.
	r = runExec(e, execCall{"zone": "storage", "cmd": "seq", "args": []string{"3000000"}})
	wantOK(t, r)
	out := r.Data["stdout"].(string)
	if r.Data["truncated"] != true || len(out) > 50200 || !strings.HasPrefix(out, "1\n2\n") || !strings.HasSuffix(out, "2999999\n3000000\n") {
		t.Fatalf("seq: truncated=%v len=%d", r.Data["truncated"], len(out))
	}
}

func TestExecOutputFiles(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+"a.txt", "alpha\n")
	r := runExec(e, execCall{"zone": "storage", "cmd": "seq", "args": []string{"3"}, "stdout_file": "out/seq.txt"})
	wantOK(t, r)
	if r.Data["stdout"] != "[Output written to out/seq.txt]" || r.Data["stdout_file"] != "out/seq.txt" || r.Data["stdout_file_size"] != 6.0 {
		t.Fatalf("data: %v", r.Data)
	}
	if b, _ := os.ReadFile(filepath.Join(e.base, execDir, "out/seq.txt")); string(b) != "1\n2\n3\n" {
		t.Fatalf("file: %q", b)
	}
	r = runExec(e, execCall{"zone": "storage", "cmd": "ls", "args": []string{"a.txt", "missing"}, "stderr_file": "err.txt"})
	wantOK(t, r)
	if r.Data["stdout"] != "a.txt\n" || r.Data["stderr"] != "[Errors written to err.txt]" || r.Data["stderr_file_size"].(float64) == 0 {
		t.Fatalf("data: %v", r.Data)
	}
	r = runExec(e, execCall{"zone": "storage", "cmd": "ls", "args": []string{"a.txt", "missing"}, "redirect_stderr_to_stdout": true})
	wantOK(t, r)
	if out := r.Data["stdout"].(string); !strings.Contains(out, "a.txt") || !strings.Contains(out, "missing") || r.Data["stderr"] != "" {
		t.Fatalf("merged: %v", r.Data)
	}
	os.Symlink("/tmp", filepath.Join(e.base, execDir, "tmp"))
	for _, c := range []struct{ name, zone, file, code string }{
		{"traversal", "storage", "../../x", "PATH_ESCAPE"},
		{"absolute", "storage", "/tmp/x", "PATH_ESCAPE"},
		{"through symlink", "storage", "tmp/x", "PATH_ESCAPE"},
		{"zone prefix", "storage", "storage/x", "PATH_STARTS_WITH_ZONE"},
		{"zone root", "storage", ".", "INVALID_PATH"},
		{"control char", "storage", "a\nb", "INVALID_PATH"},
		{"uploads", "uploads", "x.txt", "ZONE_READONLY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runExec(e, execCall{"zone": c.zone, "cmd": "echo", "args": []string{"x"}, "stdout_file": c.file})
			wantError(t, r, c.code)
			if c.code == "ZONE_READONLY" {
				wantError(t, runExec(e, execCall{"zone": c.zone, "cmd": "echo", "stderr_file": c.file}), c.code)
			}
		})
	}
	if _, err := os.Stat("/tmp/x"); err == nil {
		t.Log("note: /tmp/x exists on this host (not written by this test)")
	}
	wantError(t, runExec(e, execCall{"zone": "storage", "cmd": "echo", "stdout_file": "o", "stderr_file": "o"}), "INVALID_PARAMETER")
}

// usage reads the owner's recorded usage from the state database.
func usage(t *testing.T, e *env, user string) int64 {
	t.Helper()
	db, err := store.OpenSource(core.StateSource(e.cfg, e.base))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.Usage(context.Background(), store.Owner{Kind: "user", ID: user})
	if err != nil {
		t.Fatal(err)
	}
	return n.Bytes
}

func TestExecRespectsQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	e.write(execDir+"big", strings.Repeat("x", 600_000))
	// A copy would pass the quota: RLIMIT_FSIZE (the remaining quota) stops it.
	r := runExec(e, execCall{"zone": "storage", "cmd": "cp", "args": []string{"big", "big2"}})
	wantOK(t, r)
	if r.Data["returncode"] == 0.0 {
		t.Fatalf("cp past the quota succeeded: %v", r.Data)
	}
	if fi, err := os.Stat(filepath.Join(e.base, execDir, "big2")); err == nil && fi.Size() > 1<<20-600_000 {
		t.Fatalf("big2 is %d bytes", fi.Size())
	}
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "rm", "args": []string{"-f", "big2"}}))
	// head -c into stdout_file past the quota: refused, nothing written.
	r = runExec(e, execCall{"zone": "storage", "cmd": "head", "args": []string{"-c", "600000", "big"}, "stdout_file": "copy"})
	wantError(t, r, "QUOTA_EXCEEDED")
	if _, err := os.Stat(filepath.Join(e.base, execDir, "copy")); err == nil {
		t.Fatal("over-quota stdout_file was written")
	}
	// Usage follows what commands change.
	before := usage(t, e, "local")
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "head", "args": []string{"-c", "1000", "big"}, "stdout_file": "small"}))
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "cp", "args": []string{"small", "small2"}}))
	if got := usage(t, e, "local"); got != before+2000 {
		t.Fatalf("usage %d, want %d", got, before+2000)
	}
	wantOK(t, runExec(e, execCall{"zone": "storage", "cmd": "rm", "args": []string{"small", "small2"}}))
	if got := usage(t, e, "local"); got != before {
		t.Fatalf("usage after rm %d, want %d", got, before)
	}
}

func TestExecGitInDocuments(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := runExec(e, execCall{"zone": "documents", "cmd": "echo", "args": []string{"hello"}, "stdout_file": "notes.txt"})
	wantOK(t, r)
	// A hostile .git/config in the zone: git uses the repository outside the zone.
	e.write("users/local/Documents/data/.git/config", "[core]\n\tfsmonitor = touch pwned\n\tpager = touch pwned\n[alias]\n\tlog = !touch pwned\n")
	r = runExec(e, execCall{"zone": "documents", "cmd": "git", "args": []string{"log", "--format=%an | %s", "--", "notes.txt"}})
	wantOK(t, r)
	if r.Data["returncode"] != 0.0 || !strings.Contains(r.Data["stdout"].(string), "shed_exec: echo hello") {
		t.Fatalf("git log: %v", r.Data)
	}
	r = runExec(e, execCall{"zone": "documents", "cmd": "git", "args": []string{"status", "--short"}})
	wantOK(t, r)
	if r.Data["returncode"] != 0.0 {
		t.Fatalf("git status: %v", r.Data)
	}
	if _, err := os.Stat(filepath.Join(e.base, "users/local/Documents/data/pwned")); err == nil {
		t.Fatal("the zone's .git/config ran a program")
	}
	// A writing command commits; a reader does not.
	wantOK(t, runExec(e, execCall{"zone": "documents", "cmd": "cp", "args": []string{"notes.txt", "copy.txt"}}))
	r = runExec(e, execCall{"zone": "documents", "cmd": "git", "args": []string{"log", "--oneline"}})
	if n := strings.Count(r.Data["stdout"].(string), "\n"); n != 2 {
		t.Fatalf("want 2 commits, got %q", r.Data["stdout"])
	}
}

// A whitelisted command that is not installed answers COMMAND_NOT_FOUND: the server runs
// with a PATH of one empty folder, so nothing is installed (whatever this host has).
func TestExecCommandNotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	e := start(t, nil)
	r := e.post("shed_exec", execCall{"zone": "storage", "cmd": "sort", "args": []string{"x"}}, nil)
	wantError(t, r, "COMMAND_NOT_FOUND")
	if !strings.Contains(r.Hint, "shed_info(action='commands')") {
		t.Fatalf("hint: %s", r.raw)
	}
}

func TestExecLaunchFailureIsExecError(t *testing.T) {
	t.Parallel()
	// One argument over the kernel's 128 KiB limit: execve fails with E2BIG in the
	// launcher, which is a launch failure (its text, which may hold host paths, is logged).
	e := start(t, nil)
	r := runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{strings.Repeat("x", 200_000)}})
	wantError(t, r, "EXEC_ERROR")
	if r.Details["command"] != "echo" {
		t.Fatalf("details: %v", r.Details)
	}
}

func TestExecSandboxRequired(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_EXEC_SANDBOX": "required"})
	resp, err := http.Get(e.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sandbox.Detect().Available {
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("readyz %d with Landlock available", resp.StatusCode)
		}
		r := runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{"x"}})
		wantOK(t, r)
		if r.Data["sandboxed"] != true {
			t.Fatalf("required mode ran without Landlock: %v", r.Data)
		}
		// SANDBOX_UNAVAILABLE cannot happen on this kernel; it is provoked on kernels
		// without Landlock by the branch below.
		seen.Store("SANDBOX_UNAVAILABLE", true)
		return
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz %d without Landlock in required mode", resp.StatusCode)
	}
	wantError(t, runExec(e, execCall{"zone": "storage", "cmd": "echo", "args": []string{"x"}}), "SANDBOX_UNAVAILABLE")
}

func TestAllowedCommands(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_allowed_commands", nil, nil)
	wantOK(t, r)
	up := r.Data["uploads"].(map[string]any)
	st := r.Data["storage"].(map[string]any)
	sb := r.Data["sandbox"].(map[string]any)
	if len(up["available"].([]any)) == 0 || len(st["available"].([]any)) <= len(up["available"].([]any)) ||
		sb["landlock"] != sandbox.Detect().Available || sb["mode"] != "required" {
		t.Fatalf("data: %v", r.Data)
	}
	net := r.Data["network"].(map[string]any)
	if net["mode"] != "disabled" || net["curl"].(map[string]any)["enabled"] != false || net["git_push"] != false {
		t.Fatalf("network: %v", net)
	}
}

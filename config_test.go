package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/valves"
)

// runBinary runs the built binary with extra FILESHED_* variables and returns its exit code,
// stdout and stderr; a run still going after 10 s is killed and fails the test (a refused
// configuration must never reach serving).
func runBinary(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v %v still running after 10 s: %s", env, args, errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestRefusedConfigurationCreatesNothing: what serve refuses, `fileshed valves` refuses
// too (one validation), and neither creates anything in the storage directory first (the
// refusal used to come after fileshed.sqlite, users/ and groups/ were made). Each refusal
// names the variable to fix.
func TestRefusedConfigurationCreatesNothing(t *testing.T) {
	t.Parallel() // each case owns its storage folder and its process
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"short links secret", []string{"FILESHED_LINKS_SECRET=short"}, "FILESHED_LINKS_SECRET"},
		{"unknown tool in tool_descriptions", []string{`FILESHED_TOOL_DESCRIPTIONS={"shed_nope":"x"}`}, "shed_nope"},
		{"action of a merged tool in tool_descriptions", []string{`FILESHED_TOOL_DESCRIPTIONS={"shed_lockedit_open":"x"}`}, "tool_descriptions"},
		{"one-character api key", []string{"FILESHED_AUTH_MODE=headers", "FILESHED_AUTH_API_KEY=x"}, "FILESHED_AUTH_API_KEY"},
		{"short jwt secret", []string{"FILESHED_AUTH_MODE=jwt", "FILESHED_AUTH_API_KEY=0123456789abcdef", "FILESHED_AUTH_JWT_SECRET=s"}, "FILESHED_AUTH_JWT_SECRET"},
		{"option-like none user id", []string{"FILESHED_AUTH_NONE_USER_ID=-rf"}, "FILESHED_AUTH_NONE_USER_ID"},
		{"none mode on all interfaces", []string{"FILESHED_LISTEN=0.0.0.0:0"}, "FILESHED_AUTH_ALLOW_INSECURE_NONE"},
	}
	for _, tc := range cases {
		for _, cmd := range []string{"valves", "serve"} {
			t.Run(tc.name+"/"+cmd, func(t *testing.T) {
				t.Parallel()
				storage := filepath.Join(t.TempDir(), "data")
				env := append([]string{"FILESHED_STORAGE_BASE_PATH=" + storage}, tc.env...)
				if !strings.HasPrefix(strings.Join(tc.env, " "), "FILESHED_LISTEN") {
					env = append(env, "FILESHED_LISTEN=127.0.0.1:0")
				}
				code, _, stderr := runBinary(t, env, cmd)
				if code != 2 || !strings.Contains(stderr, tc.want) {
					t.Fatalf("exit %d, stderr %q, want exit 2 naming %s", code, stderr, tc.want)
				}
				if _, err := os.Stat(storage); !os.IsNotExist(err) {
					t.Fatalf("the refused configuration created the storage directory: %v", err)
				}
			})
		}
	}
}

// TestValvesCommandNamesEveryVariableAndFlag: `fileshed valves` shows each setting's flag
// and FILESHED_* variable (as the README promises), and `fileshed valves --env` prints the
// configuration as an env file, with the given flags applied and secrets redacted.
func TestValvesCommandNamesEveryVariableAndFlag(t *testing.T) {
	t.Setenv("FILESHED_LINKS_SECRET", "links-secret-0123456789")
	var out, errb bytes.Buffer
	if code := run([]string{"valves", "--quota-per-user-mb", "12"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var env, envErr bytes.Buffer
	if code := run([]string{"valves", "--env", "--quota-per-user-mb=12"}, &env, &envErr); code != 0 {
		t.Fatalf("valves --env: exit %d: %s", code, envErr.String())
	}
	for _, name := range valves.Names() {
		variable := "FILESHED_" + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
		flag := "--" + strings.NewReplacer(".", "-", "_", "-").Replace(name)
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` .* ` + variable + `(\[_FILE\])? +` + flag + ` `).Match(out.Bytes()) {
			t.Errorf("valves has no row naming %s, %s and %s", name, variable, flag)
		}
		if !regexp.MustCompile(`(?m)^(# )?` + variable + `=`).Match(env.Bytes()) {
			t.Errorf("valves --env has no line for %s", variable)
		}
	}
	for _, want := range []string{"FILESHED_QUOTA_PER_USER_MB=12\n", "\n# FILESHED_LINKS_SECRET=<redacted>  (set: give it here, or as FILESHED_LINKS_SECRET_FILE)\n", "FILESHED_CORS_ALLOWED_ORIGINS=\n"} {
		if !strings.Contains(env.String(), want) {
			t.Errorf("valves --env lacks %q:\n%s", want, env.String())
		}
	}
	if strings.Contains(out.String()+env.String(), "links-secret-0123456789") {
		t.Error("a secret is shown")
	}
}

// TestStartWarnsOfMistakes: a mistyped FILESHED_* variable is named at start with the
// closest setting (serve logs it, `fileshed valves` prints it), and so is public_url left
// empty while listening on every interface; neither stops the server.
func TestStartWarnsOfMistakes(t *testing.T) {
	t.Setenv("FILESHED_QUOTAPERUSER", "5")
	var out, errb bytes.Buffer
	code := run([]string{"valves", "--listen", "0.0.0.0:8000", "--auth-allow-insecure-none"}, &out, &errb)
	for _, want := range []string{"warning: FILESHED_QUOTAPERUSER is not a setting (did you mean FILESHED_QUOTA_PER_USER_MB?)",
		"warning: public_url is not set", "http://localhost:8000", "FILESHED_PUBLIC_URL"} {
		if code != 0 || !strings.Contains(errb.String(), want) {
			t.Errorf("valves: exit %d, stderr lacks %q: %s", code, want, errb.String())
		}
	}
	errb.Reset()
	code = run([]string{"valves", "--cors-allowed-origins", "*"}, &out, &errb)
	for _, want := range []string{`warning: cors.allowed_origins is "*": every web page`, "auth.mode none"} {
		if code != 0 || !strings.Contains(errb.String(), want) {
			t.Errorf("valves: exit %d, stderr lacks %q: %s", code, want, errb.String())
		}
	}
	s := serveBinary(t, "FILESHED_QUOTAPERUSER=5")
	// The warning is logged before the server listens; read the log once the process ended.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if !strings.Contains(s.logs.String(), `"level":"WARN","msg":"FILESHED_QUOTAPERUSER is not a setting (did you mean FILESHED_QUOTA_PER_USER_MB?)`) {
		t.Fatalf("serve logged no warning: %s", s.logs.String())
	}
}

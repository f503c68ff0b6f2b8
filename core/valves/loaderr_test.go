package valves

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRejects: every way a start-up configuration can be wrong stops Load with an error
// that names the key, flag, variable or valve at fault.
func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name string
		file string // --config file content; "" = none
		env  map[string]string
		args []string
		want []string // parts of the error
	}{
		{name: "unknown top-level key", file: "quota_per_usr_mb: 5\n", want: []string{"quota_per_usr_mb", "valves.yaml"}},
		{name: "unknown nested key", file: "auth:\n  mdoe: jwt\n", want: []string{"mdoe", "valves.yaml"}},
		{name: "wrong type in file", file: "quota_per_user_mb: lots\n", want: []string{"lots", "valves.yaml"}},
		{name: "list where a string goes", file: "listen: [a, b]\n", want: []string{"valves.yaml"}},
		{name: "file is a list", file: "- listen\n", want: []string{"valves.yaml"}},
		{name: "duplicate key", file: "listen: a:1\nlisten: b:2\n", want: []string{"listen", "already defined"}},
		{name: "second document", file: "listen: 127.0.0.1:1\n---\nauth: {mode: none}\n", want: []string{"valves.yaml", "more than one YAML document"}},
		{name: "broken second document", file: "listen: 127.0.0.1:1\n---\n[\n", want: []string{"valves.yaml", "more than one YAML document"}},
		{name: "invalid enum in file", file: "auth:\n  mode: root\n", want: []string{"auth.mode", `"root"`}},
		{name: "negative quota in env", env: map[string]string{"FILESHED_QUOTA_PER_USER_MB": "-1"}, want: []string{"quota_per_user_mb", "-1"}},
		{name: "bad listen flag", args: []string{"--listen", "8000"}, want: []string{"listen", `"8000"`}},
		{name: "bad int in env", env: map[string]string{"FILESHED_QUOTA_PER_USER_MB": "abc"}, want: []string{"FILESHED_QUOTA_PER_USER_MB", `"abc"`, "quota_per_user_mb"}},
		{name: "int overflow in env", env: map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "99999999999999999999"}, want: []string{"FILESHED_MAX_FILE_SIZE_MB"}},
		{name: "bad bool in env", env: map[string]string{"FILESHED_SQLITE_READONLY": "maybe"}, want: []string{"FILESHED_SQLITE_READONLY", `"maybe"`}},
		{name: "broken JSON list in env", env: map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": `["https://a.example"`}, want: []string{"FILESHED_CORS_ALLOWED_ORIGINS", "JSON list", "comma-separated"}},
		{name: "JSON of the wrong shape in env", env: map[string]string{"FILESHED_GROUPS_STATIC": `{"g":"u1"}`}, want: []string{"FILESHED_GROUPS_STATIC", `give one like {"name":["a","b"]}`}},
		{name: "map given as a list", env: map[string]string{"FILESHED_TOOL_DESCRIPTIONS": "shed_exec"}, want: []string{"FILESHED_TOOL_DESCRIPTIONS", `give one like {"name":"text"}`}},
		{name: "every bad variable is reported", env: map[string]string{"FILESHED_LISTEN": "x", "FILESHED_EXEC_TIMEOUT_MAX": "x", "FILESHED_LOG_LEVEL": "x", "FILESHED_MAX_BODY_MB": "x"}, want: []string{"FILESHED_EXEC_TIMEOUT_MAX", "FILESHED_MAX_BODY_MB"}},
		{name: "bad int flag", args: []string{"--exec-timeout-max=5m"}, want: []string{"--exec-timeout-max", `"5m"`}},
		{name: "unknown flag", args: []string{"--quota-per-user", "5"}, want: []string{"unknown flag --quota-per-user"}},
		{name: "unknown flag with value", args: []string{"--auth-apikey=hunter2"}, want: []string{"unknown flag --auth-apikey"}},
		{name: "single-dash flag", args: []string{"-listen", "x:1"}, want: []string{`unexpected argument "-listen"`}},
		{name: "positional argument", args: []string{"serve"}, want: []string{`unexpected argument "serve"`}},
		{name: "bare double dash", args: []string{"--"}, want: []string{`unexpected argument "--"`}},
		{name: "bool given as separate word", args: []string{"--sqlite-readonly", "false"}, want: []string{`unexpected argument "false"`}},
		{name: "flag without value", args: []string{"--listen"}, want: []string{"--listen needs a value"}},
		{name: "config flag without value", args: []string{"--config"}, want: []string{"--config needs a value"}},
		{name: "missing config file", env: map[string]string{"FILESHED_CONFIG": "/nonexistent/valves.yaml"}, want: []string{"config file", "no such file"}},
		{name: "config file is a directory", args: []string{"--config", os.TempDir()}, want: []string{"config file"}},
		{name: "session mode without openwebui.url", env: map[string]string{"FILESHED_AUTH_MODE": "session"}, want: []string{"auth.mode", "openwebui.url"}},
		{name: "default above max across layers", file: "exec_timeout_max: 10\n", want: []string{"exec_timeout_default", "exec_timeout_max"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.file != "" {
				env["FILESHED_CONFIG"] = writeFile(t, "valves.yaml", tt.file)
			}
			cfg, src, err := Load(defaults(t), tt.args, environ(env))
			wantErr(t, err, tt.want...)
			if cfg != nil || src != nil {
				t.Errorf("Load returned a config with its error")
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q echoes a value", err)
			}
		})
	}
}

// TestRejectsBrokenEmbeddedDefaults: a bad embedded file is reported as such.
func TestRejectsBrokenEmbeddedDefaults(t *testing.T) {
	_, _, err := Load([]byte("listen: [\n"), nil, environ(nil))
	wantErr(t, err, "embedded valves.yaml")
}

// TestConfigFlagBeatsConfigEnv: --config names the file even when FILESHED_CONFIG is set.
func TestConfigFlagBeatsConfigEnv(t *testing.T) {
	byFlag := writeFile(t, "flag.yaml", "quota_per_user_mb: 11\n")
	byEnv := writeFile(t, "env.yaml", "quota_per_user_mb: 22\n")
	cfg, src, err := Load(defaults(t), []string{"--config=" + byFlag}, environ(map[string]string{"FILESHED_CONFIG": byEnv}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QuotaPerUserMB != 11 || src["quota_per_user_mb"] != "file" {
		t.Errorf("quota_per_user_mb = %d (%s), want 11 from the --config file", cfg.QuotaPerUserMB, src["quota_per_user_mb"])
	}
}

// TestSecretFromFile covers FILESHED_<SECRET>_FILE: content read, trailing newline trimmed,
// both forms at once refused, and unreadable or huge files refused without their content.
func TestSecretFromFile(t *testing.T) {
	dir := t.TempDir()
	secretFile := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := secretFile("huge", strings.Repeat("s3cr3t-", maxSecretFile/7+1))
	tests := []struct {
		name    string
		env     map[string]string
		want    string   // jwt secret loaded; "" when an error is expected
		wantErr []string // parts of the error
	}{
		{name: "file with trailing newline", env: map[string]string{"FILESHED_AUTH_JWT_SECRET_FILE": secretFile("a", "s3cr3t-jwt-0123456789\n")}, want: "s3cr3t-jwt-0123456789"},
		{name: "file with CRLF", env: map[string]string{"FILESHED_AUTH_JWT_SECRET_FILE": secretFile("b", "s3cr3t-jwt-0123456789\r\n")}, want: "s3cr3t-jwt-0123456789"},
		{name: "inner spaces kept", env: map[string]string{"FILESHED_AUTH_JWT_SECRET_FILE": secretFile("c", " s3cr3t jwt 0123456789 ")}, want: " s3cr3t jwt 0123456789 "},
		{name: "plain variable", env: map[string]string{"FILESHED_AUTH_JWT_SECRET": "s3cr3t-plain-0123456789"}, want: "s3cr3t-plain-0123456789"},
		{name: "both set", env: map[string]string{"FILESHED_AUTH_JWT_SECRET": "s3cr3t-plain", "FILESHED_AUTH_JWT_SECRET_FILE": secretFile("d", "s3cr3t-file")},
			wantErr: []string{"FILESHED_AUTH_JWT_SECRET and FILESHED_AUTH_JWT_SECRET_FILE are both set"}},
		{name: "missing file", env: map[string]string{"FILESHED_AUTH_JWT_SECRET_FILE": filepath.Join(dir, "nope")}, wantErr: []string{"FILESHED_AUTH_JWT_SECRET_FILE", "no such file"}},
		{name: "directory", env: map[string]string{"FILESHED_AUTH_JWT_SECRET_FILE": dir}, wantErr: []string{"FILESHED_AUTH_JWT_SECRET_FILE", "is a directory"}},
		{name: "huge file", env: map[string]string{"FILESHED_AUTH_JWT_SECRET_FILE": huge}, wantErr: []string{"FILESHED_AUTH_JWT_SECRET_FILE", "larger than"}},
		{name: "_FILE of a non-secret is not read", env: map[string]string{"FILESHED_LISTEN_FILE": secretFile("e", "0.0.0.0:1"), "FILESHED_AUTH_JWT_SECRET": "s3cr3t-x-0123456789"}, want: "s3cr3t-x-0123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"FILESHED_AUTH_MODE": "jwt", "FILESHED_AUTH_API_KEY": "s3cr3t-key-0123456789"}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, src, err := Load(defaults(t), nil, environ(env))
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr...)
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error %q contains secret text", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Auth.JWTSecret != tt.want || src["auth.jwt_secret"] != "env" {
				t.Errorf("jwt_secret = %q (%s), want %q from env", cfg.Auth.JWTSecret, src["auth.jwt_secret"], tt.want)
			}
			if cfg.Listen != "127.0.0.1:8000" {
				t.Errorf("listen = %q: a _FILE variable was read for a non-secret", cfg.Listen)
			}
		})
	}
}

package valves

import (
	"bytes"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestReportRedactsSecrets: secrets set by env, _FILE and flag never appear in Report, and
// every line names its source.
func TestReportRedactsSecrets(t *testing.T) {
	env := map[string]string{
		"FILESHED_AUTH_MODE":               "jwt",
		"FILESHED_AUTH_JWT_SECRET_FILE":    writeFile(t, "jwt", "s3cr3t-jwt-0123456789\n"),
		"FILESHED_OPENWEBUI_ADMIN_API_KEY": "s3cr3t-admin",
		"FILESHED_GROUPS_STATIC":           `{"team":["alice"]}`,
		"FILESHED_PUBLIC_URL":              "https://files.example.com/",
		"FILESHED_STORAGE_BASE_PATH":       "/srv/shed\nlisten = \"forged\"  (flag)",
		"FILESHED_OPENWEBUI_URL":           "http://localhost:8080",
		"FILESHED_LINK_TTL_HOURS_MAX":      "200",
		"FILESHED_STATE_DRIVER":            "postgres",
		"FILESHED_STATE_URL_FILE":          writeFile(t, "url", "postgres://fileshed:s3cr3t-pw@db:5432/fileshed\n"),
	}
	cfg, src, err := Load(defaults(t), []string{"--auth-api-key", "s3cr3t-key-0123456789"}, environ(env))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cfg.Report(&b, src); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "s3cr3t") {
		t.Fatalf("Report shows a secret:\n%s", out)
	}
	for _, row := range [][4]string{
		{"auth.mode", "env", "FILESHED_AUTH_MODE", `"jwt"`},
		{"auth.api_key", "flag", "FILESHED_AUTH_API_KEY[_FILE]", `<redacted>`},
		{"auth.jwt_secret", "env", "FILESHED_AUTH_JWT_SECRET[_FILE]", `<redacted>`},
		{"openwebui.admin_api_key", "env", "FILESHED_OPENWEBUI_ADMIN_API_KEY[_FILE]", `<redacted>`},
		{"state.url", "env", "FILESHED_STATE_URL[_FILE]", `<redacted>`},
		{"state.driver", "env", "FILESHED_STATE_DRIVER", `"postgres"`},
		{"groups.static", "env", "FILESHED_GROUPS_STATIC", `{"team":["alice"]}`},
		{"public_url", "env", "FILESHED_PUBLIC_URL", `"https://files.example.com/"`},
		{"storage_base_path", "env", "FILESHED_STORAGE_BASE_PATH", `"/srv/shed\nlisten = \"forged\"  (flag)"`},
		{"link_ttl_hours_max", "env", "FILESHED_LINK_TTL_HOURS_MAX", `200`},
		{"openwebui.cache_seconds", "default", "FILESHED_OPENWEBUI_CACHE_SECONDS", `60`},
		{"listen", "default", "FILESHED_LISTEN", `"127.0.0.1:8000"`},
	} {
		flag := "--" + strings.NewReplacer(".", "-", "_", "-").Replace(row[0])
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(row[0]) + ` +` + row[1] + ` +` + regexp.QuoteMeta(row[2]) + ` +` +
			regexp.QuoteMeta(flag) + ` +` + regexp.QuoteMeta(row[3]) + `$`)
		if !re.MatchString(out) {
			t.Errorf("Report lacks the row %v\n%s", row, out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(Names())+1 {
		t.Errorf("Report has %d lines, want a header and one per valve (%d)", n, len(Names()))
	}
	// The env view never sets a secret to the word "<redacted>": a set secret is a comment.
	b.Reset()
	if err := cfg.ReportEnv(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "s3cr3t") || !strings.Contains(b.String(), "\n# FILESHED_AUTH_API_KEY=<redacted>  (set: ") ||
		strings.Contains(b.String(), "\nFILESHED_AUTH_JWT_SECRET=") || !strings.Contains(b.String(), "\nFILESHED_METRICS_TOKEN=\n") {
		t.Errorf("ReportEnv:\n%s", b.String())
	}
}

// TestReportWithoutSources reports every valve as a default.
func TestReportWithoutSources(t *testing.T) {
	cfg, _, err := Load(defaults(t), nil, environ(nil))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cfg.Report(&b, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`(?m)^\S+ +default +FILESHED_`).FindAllString(b.String(), -1)); n != len(Names()) {
		t.Errorf("%d default rows, want %d", n, len(Names()))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestReportReturnsWriteError: a failed write is not swallowed.
func TestReportReturnsWriteError(t *testing.T) {
	cfg := &Config{}
	wantErr(t, cfg.Report(failingWriter{}, nil), "disk full")
}

func TestPublicURL(t *testing.T) {
	tests := []struct{ name, public, listen, want string }{
		{"from listen", "", "127.0.0.1:8000", "http://127.0.0.1:8000"},
		{"ipv6 listen", "", "[::1]:8000", "http://[::1]:8000"},
		{"all interfaces", "", "0.0.0.0:8000", "http://localhost:8000"},
		{"all ipv6 interfaces", "", "[::]:8000", "http://localhost:8000"},
		{"empty host", "", ":8000", "http://localhost:8000"},
		{"host name", "", "files.lan:80", "http://files.lan:80"},
		{"unvalidated listen", "", "bogus", "http://bogus"},
		{"public url kept", "https://files.example.com/shed", "0.0.0.0:8000", "https://files.example.com/shed"},
		{"trailing slashes dropped", "https://files.example.com//", "127.0.0.1:8000", "https://files.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{PublicURLBase: tt.public, Listen: tt.listen}
			if got := c.PublicURL(); got != tt.want {
				t.Errorf("PublicURL() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMaxBodyBytes(t *testing.T) {
	tests := []struct {
		name          string
		body, maxFile int
		want          int64
	}{
		{"derived from max_file_size_mb", 0, 300, 301 << 20},
		{"explicit", 10, 300, 10 << 20},
		{"largest allowed values do not overflow", 0, 1 << 30, (1<<30 + 1) << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{MaxBodyMB: tt.body, MaxFileSizeMB: tt.maxFile}
			if got := c.MaxBodyBytes(); got != tt.want {
				t.Errorf("MaxBodyBytes() = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestReportEnvReadsBack: every line of ReportEnv, given back as its variable, sets the same
// value (lists as comma-separated values where they can be, JSON where not), and no value
// can forge a second line.
func TestReportEnvReadsBack(t *testing.T) {
	env := map[string]string{
		"FILESHED_CORS_ALLOWED_ORIGINS": `["https://a.example","https://b.example"]`,
		"FILESHED_GROUPS_STATIC":        `{"team":["alice","bob"]}`,
		"FILESHED_TOOL_DESCRIPTIONS":    `{"shed_exec":"Run, then read returncode."}`,
		"FILESHED_STORAGE_BASE_PATH":    "/srv/shed\nFILESHED_LISTEN=0.0.0.0:1",
		"FILESHED_PUBLIC_URL":           "https://files.example.com",
		"FILESHED_SQLITE_READONLY":      "true",
		"FILESHED_AUTH_NONE_USER_ID":    "bob",
	}
	cfg, _, err := Load(defaults(t), nil, environ(env))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cfg.ReportEnv(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(Names())+1 || !strings.HasPrefix(lines[0], "# ") {
		t.Fatalf("ReportEnv has %d lines, want a comment and one per valve (%d):\n%s", len(lines), len(Names()), b.String())
	}
	if !strings.Contains(b.String(), "\nFILESHED_CORS_ALLOWED_ORIGINS=https://a.example,https://b.example\n") {
		t.Errorf("the list is not comma-separated:\n%s", b.String())
	}
	back := map[string]string{}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, "=")
		back[k] = v
	}
	again, _, err := Load(defaults(t), nil, environ(back))
	if err != nil {
		t.Fatal(err)
	}
	again.StorageBasePath = cfg.StorageBasePath // quoted: a line cannot carry a newline
	if !reflect.DeepEqual(cfg, again) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", again, cfg)
	}
	if back["FILESHED_STORAGE_BASE_PATH"] != `"/srv/shed\nFILESHED_LISTEN=0.0.0.0:1"` {
		t.Errorf("a newline in a value is not quoted: %q", back["FILESHED_STORAGE_BASE_PATH"])
	}
}

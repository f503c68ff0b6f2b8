package valves

import (
	"bytes"
	"errors"
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
	for _, line := range []string{
		`auth.mode = "jwt"  (env)`,
		`auth.api_key = <redacted>  (flag)`,
		`auth.jwt_secret = <redacted>  (env)`,
		`openwebui.admin_api_key = <redacted>  (env)`,
		`groups.static = {"team":["alice"]}  (env)`,
		`public_url = "https://files.example.com/"  (env)`,
		`storage_base_path = "/srv/shed\nlisten = \"forged\"  (flag)"  (env)`,
		`link_ttl_hours_max = 200  (env)`,
		`openwebui.cache_seconds = 60  (default)`,
		`listen = "127.0.0.1:8000"  (default)`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("Report lacks line %s\n%s", line, out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(Names()) {
		t.Errorf("Report has %d lines, want one per valve (%d)", n, len(Names()))
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
	if n := strings.Count(b.String(), "  (default)\n"); n != len(Names()) {
		t.Errorf("%d default lines, want %d", n, len(Names()))
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

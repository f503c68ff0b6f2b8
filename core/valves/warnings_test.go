package valves

import (
	"strings"
	"testing"
)

// TestWarnings: a FILESHED_* variable that names no setting is named with the closest one
// (a typo is otherwise ignored without a word), and public_url left empty while listening
// on every interface says that links will point at localhost; cors.allowed_origins "*" says
// that every web page may drive the tools.
func TestWarnings(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		change  func(c *Config)
		want    []string // one part per expected warning; nil = no warning
	}{
		{name: "defaults", environ: []string{"HOME=/root", "PATH=/bin"}},
		{name: "known variables", environ: []string{"FILESHED_QUOTA_PER_USER_MB=5", "FILESHED_AUTH_API_KEY_FILE=/run/k", "FILESHED_CONFIG=/etc/v.yaml"}},
		{name: "missing underscores", environ: []string{"FILESHED_QUOTAPERUSER=5"},
			want: []string{"FILESHED_QUOTAPERUSER is not a setting (did you mean FILESHED_QUOTA_PER_USER_MB?)"}},
		{name: "typo in a section", environ: []string{"FILESHED_AUTH_MODEE=jwt"}, want: []string{"FILESHED_AUTH_MODEE is not a setting (did you mean FILESHED_AUTH_MODE?)"}},
		{name: "_FILE of a non-secret", environ: []string{"FILESHED_LISTEN_FILE=/x"}, want: []string{"FILESHED_LISTEN_FILE is not a setting (did you mean FILESHED_LISTEN?)"}},
		{name: "nothing close", environ: []string{"FILESHED_SCREENSHOTS=/tmp/s"}, want: []string{"FILESHED_SCREENSHOTS is not a setting; fileshed valves lists them"}},
		{name: "value never shown", environ: []string{"FILESHED_AUTH_APIKEY=hunter2-hunter2-hunter2"}, want: []string{"FILESHED_AUTH_APIKEY is not a setting (did you mean FILESHED_AUTH_API_KEY?)"}},
		{name: "other prefixes ignored", environ: []string{"FILESHEDX=1", "MY_FILESHED_X=1", "fileshed_listen=1"}},
		{name: "all interfaces without public_url", change: func(c *Config) { c.Listen = "0.0.0.0:8000" },
			want: []string{"links will point at http://localhost:8000", "FILESHED_PUBLIC_URL"}},
		{name: "empty host without public_url", change: func(c *Config) { c.Listen = ":8000" }, want: []string{"links will point at http://localhost:8000"}},
		{name: "all interfaces with public_url", change: func(c *Config) { c.Listen = "0.0.0.0:8000"; c.PublicURLBase = "https://files.example.com" }},
		{name: "a LAN address is the links' host", change: func(c *Config) { c.Listen = "192.168.1.5:8000" }},
		{name: "every origin", change: func(c *Config) {
			c.CORS.AllowedOrigins, c.Auth.Mode, c.Auth.APIKey = []string{"*"}, "headers", "0123456789abcdef"
		}, want: []string{`cors.allowed_origins is "*": every web page`, "FILESHED_CORS_ALLOWED_ORIGINS"}},
		{name: "every origin with no credential", change: func(c *Config) { c.CORS.AllowedOrigins = []string{"*"} },
			want: []string{`cors.allowed_origins is "*"`, "auth.mode none", "delete the files"}},
		{name: "named origins", change: func(c *Config) { c.CORS.AllowedOrigins = []string{"https://chat.example.com"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Load(defaults(t), nil, environ(nil))
			if err != nil {
				t.Fatal(err)
			}
			if tt.change != nil {
				tt.change(cfg)
			}
			got := cfg.Warnings(tt.environ)
			if len(got) != min(len(tt.want), 1) {
				t.Fatalf("warnings %q, want one containing %q", got, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("warning %q lacks %q", got[0], w)
				}
			}
			if strings.Contains(strings.Join(got, " "), "hunter2") {
				t.Errorf("a warning shows a value: %q", got)
			}
		})
	}
}

// TestTrustedOrigins: the origins siteGuard trusts are written as a browser sends Origin
// (lower case, no default port), so that the exact comparison holds: openwebui.url's origin
// when cors.allowed_origins is empty (its path dropped), the list as set otherwise.
func TestTrustedOrigins(t *testing.T) {
	tests := []struct {
		name, owui string
		list       []string
		want       string
	}{
		{"nothing set", "", nil, ""},
		{"open webui's origin", "http://localhost:8080", nil, "http://localhost:8080"},
		{"path, case and default port dropped", "HTTPS://Chat.Example.com:443/owui/", nil, "https://chat.example.com"},
		{"default http port", "http://chat.example.com:80", nil, "http://chat.example.com"},
		{"ipv6", "http://[::1]:8080", nil, "http://[::1]:8080"},
		{"ipv6 default port", "http://[::1]:80", nil, "http://[::1]"},
		{"list replaces it", "http://openwebui:8080", []string{"https://Chat.example.com", "*"}, "https://chat.example.com *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{OpenWebUI: OpenWebUIConfig{URL: tt.owui}, CORS: CORSConfig{AllowedOrigins: tt.list}}
			if got := strings.Join(c.TrustedOrigins(), " "); got != tt.want {
				t.Errorf("TrustedOrigins = %q, want %q", got, tt.want)
			}
		})
	}
}

package valves

import (
	"strings"
	"testing"
)

// TestValidate starts from the defaults, changes one thing, and expects either no error or
// an error naming the valve. Hostile values sit next to the accepted ones.
func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   string // valve named by the error; "" = valid
	}{
		{"defaults", func(c *Config) {}, ""},

		{"listen ipv6 loopback", func(c *Config) { c.Listen = "[::1]:8000" }, ""},
		{"listen localhost", func(c *Config) { c.Listen = "localhost:8000" }, ""},
		{"listen port 0", func(c *Config) { c.Listen = "127.0.0.1:0" }, ""},
		{"listen all interfaces", func(c *Config) { c.Listen = ":8000"; c.Auth.AllowInsecureNone = true }, ""},
		{"none on all interfaces", func(c *Config) { c.Listen = ":8000" }, "listen"},
		{"none on 0.0.0.0", func(c *Config) { c.Listen = "0.0.0.0:8000" }, "listen"},
		{"none on a LAN address", func(c *Config) { c.Listen = "192.168.1.5:8000" }, "listen"},
		{"none on a host name", func(c *Config) { c.Listen = "fileshed:8000" }, "listen"},
		{"none on 127.0.0.2", func(c *Config) { c.Listen = "127.0.0.2:8000" }, ""},
		{"headers on all interfaces", func(c *Config) { c.Listen = ":8000"; c.Auth.Mode = "headers"; c.Auth.APIKey = key16 }, ""},
		{"listen without port", func(c *Config) { c.Listen = "127.0.0.1" }, "listen"},
		{"listen empty", func(c *Config) { c.Listen = "" }, "listen"},
		{"listen port too big", func(c *Config) { c.Listen = "127.0.0.1:65536" }, "listen"},
		{"listen named port", func(c *Config) { c.Listen = "127.0.0.1:http" }, "listen"},
		{"listen signed port", func(c *Config) { c.Listen = "127.0.0.1:+80" }, "listen"},
		{"listen url", func(c *Config) { c.Listen = "http://127.0.0.1:8000" }, "listen"},

		{"storage path empty", func(c *Config) { c.StorageBasePath = "" }, "storage_base_path"},
		{"storage path with NUL", func(c *Config) { c.StorageBasePath = "data\x00x" }, "storage_base_path"},

		{"state postgres", func(c *Config) { c.State.Driver, c.State.URL = "postgres", "postgres://fs:pw@db:5432/fileshed" }, ""},
		{"state postgresql scheme", func(c *Config) { c.State.Driver, c.State.URL = "postgres", "postgresql://db/fileshed?sslmode=require" }, ""},
		{"state postgres socket", func(c *Config) { c.State.Driver, c.State.URL = "postgres", "postgres:///fileshed?host=/run/postgresql" }, ""},
		{"state postgres without url", func(c *Config) { c.State.Driver = "postgres" }, "state.url"},
		{"state driver unknown", func(c *Config) { c.State.Driver = "mysql" }, "state.driver"},
		{"state driver upper case", func(c *Config) { c.State.Driver = "Postgres" }, "state.driver"},
		{"state url of another database", func(c *Config) { c.State.Driver, c.State.URL = "postgres", "mysql://db/fileshed" }, "state.url"},
		{"state url keyword form", func(c *Config) { c.State.Driver, c.State.URL = "postgres", "host=db dbname=fileshed" }, "state.url"},
		{"state url with sqlite", func(c *Config) { c.State.URL = "postgres://db/fileshed" }, "state.url"},

		{"public url https with path", func(c *Config) { c.PublicURLBase = "https://x.example/fileshed/" }, ""},
		{"public url without scheme", func(c *Config) { c.PublicURLBase = "x.example" }, "public_url"},
		{"public url javascript", func(c *Config) { c.PublicURLBase = "javascript:alert(1)" }, "public_url"},
		{"public url with credentials", func(c *Config) { c.PublicURLBase = "https://u:p@x.example" }, "public_url"},
		{"public url with query", func(c *Config) { c.PublicURLBase = "https://x.example/?a=1" }, "public_url"},
		{"public url with empty fragment", func(c *Config) { c.PublicURLBase = "https://x.example/#" }, "public_url"},
		{"public url no host", func(c *Config) { c.PublicURLBase = "https:///path" }, "public_url"},
		{"public url control char", func(c *Config) { c.PublicURLBase = "https://x.example/\n" }, "public_url"},

		{"auth mode unknown", func(c *Config) { c.Auth.Mode = "admin" }, "auth.mode"},
		{"auth mode wrong case", func(c *Config) { c.Auth.Mode = "None" }, "auth.mode"},
		{"session with url", func(c *Config) { c.Auth.Mode = "session"; c.OpenWebUI.URL = "http://localhost:8080" }, ""},
		{"session without url", func(c *Config) { c.Auth.Mode = "session" }, "auth.mode"},
		{"jwt complete", func(c *Config) { c.Auth.Mode = "jwt"; c.Auth.APIKey = key16; c.Auth.JWTSecret = key16 }, ""},
		{"jwt without secret", func(c *Config) { c.Auth.Mode = "jwt"; c.Auth.APIKey = key16 }, "auth.jwt_secret"},
		{"jwt without api key", func(c *Config) { c.Auth.Mode = "jwt"; c.Auth.JWTSecret = key16 }, "auth.api_key"},
		{"jwt with a 1-character secret", func(c *Config) { c.Auth.Mode = "jwt"; c.Auth.APIKey = key16; c.Auth.JWTSecret = "s" }, "auth.jwt_secret"},
		{"headers with a 1-character key", func(c *Config) { c.Auth.Mode = "headers"; c.Auth.APIKey = "x" }, "auth.api_key"},
		{"headers with a 15-character key", func(c *Config) { c.Auth.Mode = "headers"; c.Auth.APIKey = key16[:15] }, "auth.api_key"},
		{"headers with a key of one letter repeated", func(c *Config) { c.Auth.Mode = "headers"; c.Auth.APIKey = "aaaaaaaaaaaaaaaa" }, "auth.api_key"},
		{"links secret of two letters", func(c *Config) { c.Links.Secret = "abababababababababababababababab" }, "links.secret"},
		{"headers with a hex key", func(c *Config) { c.Auth.Mode = "headers"; c.Auth.APIKey = "3f9a0c1e7b2d4f60" }, ""},
		{"short api key unused by mode none", func(c *Config) { c.Auth.APIKey = "x" }, "auth.api_key"},
		{"links secret 16", func(c *Config) { c.Links.Secret = key16 }, ""},
		{"links secret short", func(c *Config) { c.Links.Secret = "short" }, "links.secret"},
		{"metrics token short", func(c *Config) { c.Metrics.Token = "scrape" }, "metrics.token"},
		{"master key 31", func(c *Config) { c.Encryption.MasterKey = (key16 + key16)[:31] }, "encryption.master_key"},
		{"master key 32", func(c *Config) { c.Encryption.MasterKey = key16 + key16 }, ""},
		{"headers without api key", func(c *Config) { c.Auth.Mode = "headers" }, "auth.api_key"},
		{"none user uuid", func(c *Config) { c.Auth.NoneUserID = "3f2c1a9e-7b4d-4c1e-9a6f-0d2b8e5c7a11" }, ""},
		{"none user dotdot", func(c *Config) { c.Auth.NoneUserID = ".." }, "auth.none_user_id"},
		{"none user slash", func(c *Config) { c.Auth.NoneUserID = "a/b" }, "auth.none_user_id"},
		{"none user empty", func(c *Config) { c.Auth.NoneUserID = "" }, "auth.none_user_id"},
		{"none user too long", func(c *Config) { c.Auth.NoneUserID = strings.Repeat("a", 65) }, "auth.none_user_id"},
		{"none user NUL", func(c *Config) { c.Auth.NoneUserID = "a\x00" }, "auth.none_user_id"},
		{"none user option-like", func(c *Config) { c.Auth.NoneUserID = "-rf" }, "auth.none_user_id"},
		{"none user leading underscore", func(c *Config) { c.Auth.NoneUserID = "_x" }, "auth.none_user_id"},
		{"none user 64", func(c *Config) { c.Auth.NoneUserID = "a" + strings.Repeat("-", 63) }, ""},

		{"openwebui url ftp", func(c *Config) { c.OpenWebUI.URL = "ftp://x.example" }, "openwebui.url"},
		{"openwebui timeout zero", func(c *Config) { c.OpenWebUI.TimeoutSeconds = 0 }, "openwebui.timeout_seconds"},
		{"openwebui cache zero", func(c *Config) { c.OpenWebUI.CacheSeconds = 0 }, ""},
		{"openwebui cache negative", func(c *Config) { c.OpenWebUI.CacheSeconds = -1 }, "openwebui.cache_seconds"},

		{"cors origin", func(c *Config) { c.CORS.AllowedOrigins = []string{"https://chat.example.com:8443", "*"} }, ""},
		{"cors none", func(c *Config) { c.CORS.AllowedOrigins = nil }, ""},
		{"cors * with none on loopback", func(c *Config) { c.CORS.AllowedOrigins = []string{"*"} }, ""},
		{"cors * with none on all interfaces", func(c *Config) {
			c.CORS.AllowedOrigins, c.Listen, c.Auth.AllowInsecureNone = []string{"*"}, "0.0.0.0:8000", true
		}, "cors.allowed_origins"},
		{"cors * among origins with none on a LAN address", func(c *Config) {
			c.CORS.AllowedOrigins, c.Listen, c.Auth.AllowInsecureNone = []string{"https://chat.example.com", "*"}, "192.168.1.5:8000", true
		}, "cors.allowed_origins"},
		{"cors * with session on all interfaces", func(c *Config) {
			c.CORS.AllowedOrigins, c.Listen, c.Auth.Mode, c.OpenWebUI.URL = []string{"*"}, "0.0.0.0:8000", "session", "http://openwebui:8080"
		}, ""},
		{"cors named origin with none on all interfaces", func(c *Config) {
			c.CORS.AllowedOrigins, c.Listen, c.Auth.AllowInsecureNone = []string{"https://chat.example.com"}, "0.0.0.0:8000", true
		}, ""},
		{"cors origin with path", func(c *Config) { c.CORS.AllowedOrigins = []string{"https://chat.example.com/"} }, "cors.allowed_origins"},
		{"cors empty origin", func(c *Config) { c.CORS.AllowedOrigins = []string{""} }, "cors.allowed_origins"},
		{"cors bare host", func(c *Config) { c.CORS.AllowedOrigins = []string{"chat.example.com"} }, "cors.allowed_origins"},

		{"groups header empty", func(c *Config) { c.Groups.Header = "" }, "groups.header"},
		{"groups header with space", func(c *Config) { c.Groups.Header = "X Shed" }, "groups.header"},
		{"groups header with CRLF", func(c *Config) { c.Groups.Header = "X-A\r\nX-B" }, "groups.header"},
		{"static groups", func(c *Config) { c.Groups.Static = map[string][]string{"team": {"alice", "bob"}} }, ""},
		{"static group id dotdot", func(c *Config) { c.Groups.Static = map[string][]string{"..": {"alice"}} }, "groups.static"},
		{"static member with slash", func(c *Config) { c.Groups.Static = map[string][]string{"team": {"../alice"}} }, "groups.static"},
		{"static option-like group", func(c *Config) { c.Groups.Static = map[string][]string{"-team": {"alice"}} }, "groups.static"},
		{"static option-like member", func(c *Config) { c.Groups.Static = map[string][]string{"team": {"--help"}} }, "groups.static"},

		{"quota negative", func(c *Config) { c.QuotaPerUserMB = -5 }, "quota_per_user_mb"},
		{"journal inline off", func(c *Config) { c.Journal.InlineKB = 0 }, ""},
		{"journal inline past what is read", func(c *Config) { c.Journal.InlineKB = 257 }, "journal.inline_kb"},
		{"journal inline negative", func(c *Config) { c.Journal.InlineKB = -1 }, "journal.inline_kb"},
		{"quota zero", func(c *Config) { c.QuotaPerGroupMB = 0 }, "quota_per_group_mb"},
		{"file size huge", func(c *Config) { c.MaxFileSizeMB = 1 << 50 }, "max_file_size_mb"},
		{"memory limit off", func(c *Config) { c.ExecMemoryLimitMB = 0 }, ""},
		{"cpu limit negative", func(c *Config) { c.ExecCPULimitSeconds = -1 }, "exec_cpu_limit_seconds"},
		{"lock age zero", func(c *Config) { c.LockMaxAgeHours = 0 }, "lock_max_age_hours"},
		{"timeout default above max", func(c *Config) { c.ExecTimeoutDefault = 301 }, "exec_timeout_default"},
		{"timeout default equals max", func(c *Config) { c.ExecTimeoutDefault = c.ExecTimeoutMax }, ""},
		{"timeout max overflows a duration", func(c *Config) { c.ExecTimeoutMax = 1 << 62 }, "exec_timeout_max"},
		{"output default above absolute", func(c *Config) { c.MaxOutputDefault = 5000001 }, "max_output_default"},
		{"link ttl default above max", func(c *Config) { c.LinkTTLHoursDefault = 169 }, "link_ttl_hours_default"},
		{"link ttl max huge", func(c *Config) { c.LinkTTLHoursMax = 1 << 40 }, "link_ttl_hours_max"},
		{"body limit negative", func(c *Config) { c.MaxBodyMB = -1 }, "max_body_mb"},

		{"sandbox required", func(c *Config) { c.ExecSandbox = "required" }, ""},
		{"sandbox unknown", func(c *Config) { c.ExecSandbox = "strict" }, "exec_sandbox"},
		{"group mode owner_ro", func(c *Config) { c.GroupDefaultMode = "owner_ro" }, ""},
		{"group mode unknown", func(c *Config) { c.GroupDefaultMode = "world" }, "group_default_mode"},
		{"network all", func(c *Config) { c.NetworkMode = "all" }, ""},
		{"network unknown", func(c *Config) { c.NetworkMode = "open" }, "network_mode"},
		{"journal upper case", func(c *Config) { c.SQLiteJournalMode = "WAL" }, "sqlite_journal_mode"},
		{"journal off", func(c *Config) { c.SQLiteJournalMode = "off" }, "sqlite_journal_mode"},
		{"links openwebui with url", func(c *Config) { c.Links.Mode = "openwebui"; c.OpenWebUI.URL = "http://owui:8080/" }, ""},
		{"links openwebui without url", func(c *Config) { c.Links.Mode = "openwebui" }, "links.mode"},
		{"log level unknown", func(c *Config) { c.LogLevel = "trace" }, "log_level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Load(defaults(t), nil, environ(nil))
			if err != nil {
				t.Fatal(err)
			}
			tt.change(cfg)
			err = cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			wantErr(t, err, tt.want+": ")
		})
	}
}

// key16 is a secret of the shortest accepted length.
const key16 = "0123456789abcdef"

// TestValidateNamesVariableAndFlag: every problem names the valve's variable and flag (a
// container user sets FILESHED_* variables, not YAML keys); a short secret's message says how
// long it must be and how to make one, never what it was.
func TestValidateNamesVariableAndFlag(t *testing.T) {
	cfg, _, err := Load(defaults(t), nil, environ(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth.Mode, cfg.Auth.APIKey, cfg.Auth.JWTSecret = "jwt", "k3y-too-short", "jwt-too-short"
	err = cfg.Validate()
	wantErr(t, err, "auth.api_key: at least 16 characters, e.g. openssl rand -base64 16 (variable FILESHED_AUTH_API_KEY, flag --auth-api-key)",
		"auth.jwt_secret: at least 16 characters", "variable FILESHED_AUTH_JWT_SECRET, flag --auth-jwt-secret")
	if strings.Contains(err.Error(), "too-short") {
		t.Errorf("error %q shows a secret", err)
	}
}

// TestValidIDIsCoresRule: the configuration accepts exactly the ids a request may carry.
func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{"alice": true, "3f2c1a9e-7b4d-4c1e-9a6f-0d2b8e5c7a11": true, "a_b-c": true,
		"-rf": false, "--help": false, "_x": false, "": false, "..": false, "a/b": false, "é": false, strings.Repeat("a", 65): false} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestValidateReportsEveryProblem: several bad valves give one error naming each.
func TestValidateReportsEveryProblem(t *testing.T) {
	c := &Config{}
	err := c.Validate()
	for _, name := range []string{"listen", "storage_base_path", "auth.mode", "quota_per_user_mb", "exec_sandbox", "groups.header", "log_level"} {
		wantErr(t, err, name+": ")
	}
}

// TestValidateNeverEchoesSecrets: a rejected configuration full of secrets does not print them.
func TestValidateNeverEchoesSecrets(t *testing.T) {
	c := &Config{Auth: AuthConfig{Mode: "jwt", APIKey: "s3cr3t-key", JWTSecret: "s3cr3t-jwt"}, OpenWebUI: OpenWebUIConfig{AdminAPIKey: "s3cr3t-admin"},
		State: StateConfig{Driver: "postgres", URL: "mysql://fileshed:s3cr3t-pw@db/x"}}
	err := c.Validate()
	wantErr(t, err, "listen: ", "state.url: ")
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %q contains a secret", err)
	}
}

package valves

import (
	"testing"
)

// TestPrecedence: flags > env > config file > defaults, and Sources says which won.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		name string
		file string            // content of the --config file; "" = no file
		env  map[string]string // besides FILESHED_CONFIG
		args []string
		want map[string]string // valve -> Report value
		src  map[string]string // valve -> source
	}{
		{
			name: "defaults only",
			want: map[string]string{"quota_per_user_mb": "1000", "auth.mode": `"none"`},
			src:  map[string]string{"quota_per_user_mb": "default", "auth.mode": "default"},
		},
		{
			name: "file over default",
			file: "quota_per_user_mb: 5\nauth:\n  none_user_id: bob\n",
			want: map[string]string{"quota_per_user_mb": "5", "auth.none_user_id": `"bob"`, "auth.mode": `"none"`, "quota_per_group_mb": "2000"},
			src:  map[string]string{"quota_per_user_mb": "file", "auth.none_user_id": "file", "auth.mode": "default", "quota_per_group_mb": "default"},
		},
		{
			name: "env over file",
			file: "quota_per_user_mb: 5\nquota_per_group_mb: 6\n",
			env:  map[string]string{"FILESHED_QUOTA_PER_USER_MB": "7"},
			want: map[string]string{"quota_per_user_mb": "7", "quota_per_group_mb": "6"},
			src:  map[string]string{"quota_per_user_mb": "env", "quota_per_group_mb": "file"},
		},
		{
			name: "flag over env over file",
			file: "quota_per_user_mb: 5\nlog_level: warn\n",
			env:  map[string]string{"FILESHED_QUOTA_PER_USER_MB": "7", "FILESHED_LOG_LEVEL": "error"},
			args: []string{"--quota-per-user-mb", "9"},
			want: map[string]string{"quota_per_user_mb": "9", "log_level": `"error"`},
			src:  map[string]string{"quota_per_user_mb": "flag", "log_level": "env"},
		},
		{
			name: "flag with equals, bool flag alone, later flag wins",
			args: []string{"--listen=127.0.0.1:9000", "--sqlite-readonly", "--listen", "[::1]:9001"},
			want: map[string]string{"listen": `"[::1]:9001"`, "sqlite_readonly": "true"},
			src:  map[string]string{"listen": "flag", "sqlite_readonly": "flag"},
		},
		{
			name: "bool flag set false explicitly over file",
			file: "sqlite_readonly: true\n",
			args: []string{"--sqlite-readonly=false"},
			want: map[string]string{"sqlite_readonly": "false"},
			src:  map[string]string{"sqlite_readonly": "flag"},
		},
		{
			name: "empty env string is a value",
			file: "public_url: https://files.example.com/\n",
			env:  map[string]string{"FILESHED_PUBLIC_URL": ""},
			want: map[string]string{"public_url": `""`},
			src:  map[string]string{"public_url": "env"},
		},
		{
			name: "JSON list and map in env",
			env: map[string]string{
				"FILESHED_CORS_ALLOWED_ORIGINS": `["https://a.example", "http://b.example:8080"]`,
				"FILESHED_GROUPS_STATIC":        `{"team":["u1","u2"],"ops":[]}`,
			},
			want: map[string]string{
				"cors.allowed_origins": `["https://a.example","http://b.example:8080"]`,
				"groups.static":        `{"ops":[],"team":["u1","u2"]}`,
			},
			src: map[string]string{"cors.allowed_origins": "env", "groups.static": "env"},
		},
		{
			name: "comma-separated list in env",
			env:  map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": "https://a.example, http://b.example:8080,"},
			want: map[string]string{"cors.allowed_origins": `["https://a.example","http://b.example:8080"]`},
			src:  map[string]string{"cors.allowed_origins": "env"},
		},
		{
			name: "one value is a list of one",
			env:  map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": "https://a.example"},
			want: map[string]string{"cors.allowed_origins": `["https://a.example"]`},
			src:  map[string]string{"cors.allowed_origins": "env"},
		},
		{
			name: "empty variable is an empty list",
			env:  map[string]string{"FILESHED_CORS_ALLOWED_ORIGINS": ""},
			want: map[string]string{"cors.allowed_origins": `[]`},
			src:  map[string]string{"cors.allowed_origins": "env"},
		},
		{
			name: "comma-separated list in a flag",
			args: []string{"--cors-allowed-origins=https://a.example,https://b.example"},
			want: map[string]string{"cors.allowed_origins": `["https://a.example","https://b.example"]`},
			src:  map[string]string{"cors.allowed_origins": "flag"},
		},
		{
			name: "JSON map in a flag replaces the file's map",
			file: "groups:\n  static:\n    old: [x]\n",
			args: []string{"--groups-static", `{"new":["y"]}`},
			want: map[string]string{"groups.static": `{"new":["y"]}`},
			src:  map[string]string{"groups.static": "flag"},
		},
		{
			name: "file list replaces the default list",
			file: "cors:\n  allowed_origins: [\"https://chat.example.com\"]\n",
			want: map[string]string{"cors.allowed_origins": `["https://chat.example.com"]`},
			src:  map[string]string{"cors.allowed_origins": "file"},
		},
		{
			name: "empty section in the file leaves its valves alone",
			file: "auth:\nlinks: {}\n",
			want: map[string]string{"auth.mode": `"none"`, "links.mode": `"fileshed"`},
			src:  map[string]string{"auth.mode": "default", "links.mode": "default"},
		},
		{
			name: "YAML anchors and merge keys count as present",
			file: "link_ttl_hours_default: &h 48\nlock_max_age_hours: *h\nauth:\n  <<: {none_user_id: carol}\n",
			want: map[string]string{"link_ttl_hours_default": "48", "lock_max_age_hours": "48", "auth.none_user_id": `"carol"`},
			src:  map[string]string{"link_ttl_hours_default": "file", "lock_max_age_hours": "file", "auth.none_user_id": "file"},
		},
		{
			name: "comments-only file",
			file: "# nothing here\n",
			want: map[string]string{"listen": `"127.0.0.1:8000"`},
			src:  map[string]string{"listen": "default"},
		},
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
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				if got := shown(t, cfg, name); got != want {
					t.Errorf("%s = %s, want %s", name, got, want)
				}
			}
			for name, want := range tt.src {
				if src[name] != want {
					t.Errorf("source of %s = %q, want %q", name, src[name], want)
				}
			}
			if len(src) != len(Names()) {
				t.Errorf("Sources has %d entries, want one per valve (%d)", len(src), len(Names()))
			}
		})
	}
}

package valves

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDefaultsFileLoads loads the real valves.yaml alone and checks every default against
// the contract (DESIGN.md §8 and the brief), the order of valves and the Report format.
func TestDefaultsFileLoads(t *testing.T) {
	cfg, src, err := Load(defaults(t), nil, environ(nil))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cfg.Report(&b, src); err != nil {
		t.Fatal(err)
	}
	want := `listen = "127.0.0.1:8000"  (default)
storage_base_path = "./data"  (default)
public_url = ""  (default)
auth.mode = "none"  (default)
auth.api_key = ""  (default)
auth.jwt_secret = ""  (default)
auth.jwt_issuer = "open-webui"  (default)
auth.allow_insecure_none = false  (default)
auth.none_user_id = "local"  (default)
openwebui.url = ""  (default)
openwebui.admin_api_key = ""  (default)
openwebui.timeout_seconds = 5  (default)
openwebui.cache_seconds = 60  (default)
cors.allowed_origins = ["*"]  (default)
groups.header = "X-Shed-Groups"  (default)
groups.static = {}  (default)
quota_per_user_mb = 1000  (default)
quota_per_group_mb = 2000  (default)
max_file_size_mb = 300  (default)
lock_max_age_hours = 24  (default)
lock_force_after_minutes = 30  (default)
exec_timeout_default = 30  (default)
exec_timeout_max = 240  (default)
exec_memory_limit_mb = 512  (default)
exec_cpu_limit_seconds = 60  (default)
exec_sandbox = "required"  (default)
exec_max_per_user = 4  (default)
exec_max_total = 0  (default)
exec_memory_total_mb = 0  (default)
group_default_mode = "group"  (default)
network_mode = "disabled"  (default)
max_output_default = 50000  (default)
max_output_absolute = 5000000  (default)
sqlite_readonly = false  (default)
sqlite_journal_mode = "wal"  (default)
sqlite_rows_default = 10  (default)
sqlite_rows_max = 10000  (default)
sqlite_memory_mb = 64  (default)
link_ttl_hours_default = 24  (default)
link_ttl_hours_max = 168  (default)
page_max_kb = 1024  (default)
links.mode = "fileshed"  (default)
links.secret = ""  (default)
audit_retention_days = 90  (default)
metrics.token = ""  (default)
archive.max_entries = 10000  (default)
archive.max_total_mb = 500  (default)
archive.max_ratio = 100  (default)
archive.max_depth = 64  (default)
archive.max_name_length = 1024  (default)
encryption.master_key = ""  (default)
encryption.work_dir = ""  (default)
log_level = "info"  (default)
tool_descriptions = {}  (default)
max_body_mb = 0  (default)
shutdown_grace_seconds = 25  (default)
`
	if got := b.String(); got != want {
		t.Errorf("Report of the defaults:\n%s\nwant:\n%s", got, want)
	}
	if got := cfg.PublicURL(); got != "http://127.0.0.1:8000" {
		t.Errorf("PublicURL = %q", got)
	}
}

// TestDefaultsFileMatchesConfig: every valve has a key in valves.yaml and every key is a
// valve (or a section holding valves).
func TestDefaultsFileMatchesConfig(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(defaults(t), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range doc {
		if sub, ok := v.(map[string]any); ok && !slices.Contains(Names(), k) { // a section, not a map valve
			for sk := range sub {
				keys = append(keys, k+"."+sk)
			}
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	names := slices.Sorted(slices.Values(Names()))
	if !slices.Equal(keys, names) {
		t.Errorf("valves.yaml keys:\n%v\nConfig valves:\n%v", keys, names)
	}
	for _, n := range names {
		if !has(doc, n) {
			t.Errorf("valve %s has no key in valves.yaml", n)
		}
	}
}

// TestDefaultsFileCommentsEveryKey: the file is the documentation, so every key (sections
// and nested keys too) has a comment line right above it.
func TestDefaultsFileCommentsEveryKey(t *testing.T) {
	key := regexp.MustCompile(`^\s*[a-z_]+:`)
	lines := strings.Split(string(defaults(t)), "\n")
	seen := 0
	for i, l := range lines {
		if !key.MatchString(l) {
			continue
		}
		seen++
		if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
			t.Errorf("line %d %q has no comment line above it", i+1, l)
		}
	}
	// the valves + 8 sections: the scan really looked at the keys.
	if want := len(Names()) + 8; seen != want {
		t.Errorf("saw %d keys, want %d", seen, want)
	}
}

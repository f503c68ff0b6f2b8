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
// the contract (DESIGN.md §8 and the brief): the variables, their order and their values in
// the ReportEnv format.
func TestDefaultsFileLoads(t *testing.T) {
	cfg, src, err := Load(defaults(t), nil, environ(nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(src); n != len(Names()) {
		t.Errorf("%d sources, want one per valve (%d)", n, len(Names()))
	}
	var b bytes.Buffer
	if err := cfg.ReportEnv(&b); err != nil {
		t.Fatal(err)
	}
	want := `# fileshed valves --env: the effective configuration (secrets redacted)
FILESHED_LISTEN=127.0.0.1:8000
FILESHED_STORAGE_BASE_PATH=./data
FILESHED_STATE_DRIVER=sqlite
FILESHED_STATE_URL=
FILESHED_STATE_LOCK_CONNECTIONS=32
FILESHED_PUBLIC_URL=
FILESHED_AUTH_MODE=none
FILESHED_AUTH_API_KEY=
FILESHED_AUTH_JWT_SECRET=
FILESHED_AUTH_JWT_ISSUER=open-webui
FILESHED_AUTH_ALLOW_INSECURE_NONE=false
FILESHED_AUTH_NONE_USER_ID=local
FILESHED_OPENWEBUI_URL=
FILESHED_OPENWEBUI_ADMIN_API_KEY=
FILESHED_OPENWEBUI_TIMEOUT_SECONDS=5
FILESHED_OPENWEBUI_CACHE_SECONDS=60
FILESHED_CORS_ALLOWED_ORIGINS=
FILESHED_GROUPS_HEADER=X-Shed-Groups
FILESHED_GROUPS_STATIC={}
FILESHED_GROUPS_MEMBER_SEEN_DAYS=30
FILESHED_QUOTA_PER_USER_MB=1000
FILESHED_QUOTA_PER_GROUP_MB=2000
FILESHED_QUOTA_FILES_PER_USER=100000
FILESHED_QUOTA_FILES_PER_GROUP=200000
FILESHED_MAX_FILE_SIZE_MB=300
FILESHED_LOCK_MAX_AGE_HOURS=24
FILESHED_LOCK_FORCE_AFTER_MINUTES=30
FILESHED_EXEC_TIMEOUT_DEFAULT=30
FILESHED_EXEC_TIMEOUT_MAX=240
FILESHED_EXEC_MEMORY_LIMIT_MB=512
FILESHED_EXEC_CPU_LIMIT_SECONDS=60
FILESHED_EXEC_SANDBOX=required
FILESHED_EXEC_MAX_PER_USER=4
FILESHED_EXEC_MAX_TOTAL=0
FILESHED_EXEC_MEMORY_TOTAL_MB=0
FILESHED_GROUP_DEFAULT_MODE=group
FILESHED_NETWORK_MODE=disabled
FILESHED_MAX_OUTPUT_DEFAULT=50000
FILESHED_MAX_OUTPUT_ABSOLUTE=5000000
FILESHED_SQLITE_READONLY=false
FILESHED_SQLITE_JOURNAL_MODE=wal
FILESHED_SQLITE_ROWS_DEFAULT=10
FILESHED_SQLITE_ROWS_MAX=10000
FILESHED_SQLITE_MEMORY_MB=64
FILESHED_LINK_TTL_HOURS_DEFAULT=24
FILESHED_LINK_TTL_HOURS_MAX=168
FILESHED_PAGE_MAX_KB=1024
FILESHED_LINKS_MODE=fileshed
FILESHED_LINKS_SECRET=
FILESHED_AUDIT_RETENTION_DAYS=90
FILESHED_METRICS_TOKEN=
FILESHED_MCP_ENABLED=false
FILESHED_ARCHIVE_MAX_ENTRIES=10000
FILESHED_ARCHIVE_MAX_TOTAL_MB=500
FILESHED_ARCHIVE_MAX_RATIO=100
FILESHED_ARCHIVE_MAX_DEPTH=64
FILESHED_ARCHIVE_MAX_NAME_LENGTH=1024
FILESHED_ENCRYPTION_MASTER_KEY=
FILESHED_ENCRYPTION_WORK_DIR=
FILESHED_JOURNAL_ENABLED=true
FILESHED_JOURNAL_KEEP_DAYS=7
FILESHED_JOURNAL_MAX_PERCENT=20
FILESHED_JOURNAL_MAX_FILE_MB=50
FILESHED_JOURNAL_INLINE_KB=64
FILESHED_LOG_LEVEL=info
FILESHED_TOOL_DESCRIPTIONS={}
FILESHED_MAX_BODY_MB=0
FILESHED_SHUTDOWN_GRACE_SECONDS=25
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
	// the valves + 11 sections: the scan really looked at the keys.
	if want := len(Names()) + 11; seen != want {
		t.Errorf("saw %d keys, want %d", seen, want)
	}
}

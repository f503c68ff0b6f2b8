package valves

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// defaultsPath is the real top-level valves.yaml that main embeds.
const defaultsPath = "../../valves.yaml"

func defaults(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(defaultsPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// environ is a test environment: a lookup over a map.
func environ(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// writeFile writes content to a new file in a fresh temp directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// shown is the Report rendering of one valve of c.
func shown(t *testing.T, c *Config, name string) string {
	t.Helper()
	for _, v := range all {
		if v.name == name {
			return v.show(c)
		}
	}
	t.Fatalf("no valve %q", name)
	return ""
}

// wantErr fails unless err is non-nil and contains every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

package core

import (
	"os"
	"testing"

	"github.com/fileshed/fileshed/core/valves"
)

// testService is a real Service on a temporary storage directory, with valves overridden
// by FILESHED_* variables; it returns the service and its storage directory.
func testService(t testing.TB, vars map[string]string) (*Service, string) {
	t.Helper()
	defaults, err := os.ReadFile("../valves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	cfg, _, err := valves.Load(defaults, nil, func(k string) (string, bool) {
		if k == "FILESHED_STORAGE_BASE_PATH" {
			return base, true
		}
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

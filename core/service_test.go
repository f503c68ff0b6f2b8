package core

import (
	"testing"

	"github.com/fileshed/fileshed/internal/testvalves"
)

// testService is a real Service on a temporary storage directory, with valves overridden
// by FILESHED_* variables; it returns the service and its storage directory.
func testService(t testing.TB, vars map[string]string) (*Service, string) {
	t.Helper()
	base := t.TempDir()
	cfg := testvalves.Config(t, base, vars)
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

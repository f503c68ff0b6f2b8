// Package coretest builds a real kernel (core.Service) for the tests of the tool families:
// a temporary storage directory, the embedded valves with FILESHED_* overrides.
package coretest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/valves"
)

// Service is a real kernel on a temporary storage directory, with valves overridden by
// FILESHED_* variables; it returns the kernel and its storage directory, closed at the
// end of the test.
func Service(t testing.TB, vars map[string]string) (*core.Service, string) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	defaults, err := os.ReadFile(filepath.Join(filepath.Dir(here), "../../valves.yaml"))
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
	s, err := core.New(cfg, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

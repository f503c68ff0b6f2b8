// Package coretest builds a real kernel (core.Service) for the tests of the tool families:
// a temporary storage directory, the embedded valves with FILESHED_* overrides.
package coretest

import (
	"testing"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/internal/testvalves"
)

// Service is a real kernel on a temporary storage directory, with valves overridden by
// FILESHED_* variables; it returns the kernel and its storage directory, closed at the
// end of the test.
func Service(t testing.TB, vars map[string]string) (*core.Service, string) {
	t.Helper()
	base := t.TempDir()
	cfg := testvalves.Config(t, base, vars)
	s, err := core.New(cfg, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

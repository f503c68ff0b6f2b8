// Package testvalves loads the project's valves.yaml for a test: the defaults every server
// starts with, FILESHED_STORAGE_BASE_PATH set to a storage directory of the test, and other
// FILESHED_* variables from a map. It imports no server package, so the kernel's own tests
// use it as well as coretest.
package testvalves

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fileshed/fileshed/core/valves"
)

// Config is the configuration of a server on the storage directory base, with vars
// overriding the valves (FILESHED_* names).
func Config(t testing.TB, base string, vars map[string]string) *valves.Config {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	defaults, err := os.ReadFile(filepath.Join(filepath.Dir(here), "../../valves.yaml"))
	if err != nil {
		t.Fatal(err)
	}
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
	return cfg
}

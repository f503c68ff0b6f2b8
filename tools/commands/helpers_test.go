package commands

import (
	"testing"

	"github.com/fileshed/fileshed/internal/coretest"
)

// testService is the command tools over a real kernel on a temporary storage directory.
func testService(t testing.TB, vars map[string]string) (*Tools, string) {
	t.Helper()
	k, base := coretest.Service(t, vars)
	return New(k.Kernel()), base
}

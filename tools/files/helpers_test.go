package files

import (
	"testing"

	"github.com/fileshed/fileshed/internal/coretest"
	"github.com/fileshed/fileshed/tools/commands"
)

// testService is the file tools over a real kernel on a temporary storage directory.
func testService(t testing.TB, vars map[string]string) (*Tools, string) {
	t.Helper()
	k, base := coretest.Service(t, vars)
	return New(k.Kernel(), commands.New(k.Kernel())), base
}

package handlers_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testtool"
)

// aloneCodes prefixes the line where a child reports the error codes its test provoked (the
// parent's catalogue check counts them).
const aloneCodes = "alone: codes provoked:"

// alone is testtool.Alone for the handlers' tests: the test runs in a child process of its
// own (the first statement of a test that measures or changes process-wide state: the live
// heap and the allocation counters, a package variable, SQLite's heap limit; issue 34), the
// child leaves the error catalogue to its parent and reports the codes its test provoked,
// which the parent counts as its own.
func alone(t *testing.T) bool {
	t.Helper()
	child := testtool.Alone(t, []string{"FILESHED_SKIP_CATALOGUE=1"}, func(line string) {
		if codes, ok := strings.CutPrefix(line, aloneCodes); ok {
			for _, c := range strings.Fields(codes) {
				seen.Store(c, true)
			}
		}
	})
	if child {
		t.Cleanup(func() {
			var codes []string
			seen.Range(func(k, _ any) bool { codes = append(codes, k.(string)); return true })
			fmt.Println(aloneCodes, strings.Join(codes, " "))
		})
	}
	return child
}

// TestAloneRunsInAProcessOfItsOwn: a test that asks to run alone runs in a child process of
// this test binary, and the parent's verdict is the child's (a failure in the child fails
// the parent: its message is shown by the parent's failure).
func TestAloneRunsInAProcessOfItsOwn(t *testing.T) {
	if !alone(t) {
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if parent, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid())); err != nil || parent != self {
		t.Fatalf("the parent process runs %q (%v), not the test binary %s", parent, err, self)
	}
}

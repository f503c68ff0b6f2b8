package handlers_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// aloneEnv names, in the environment of a child test process, the test it runs alone.
const aloneEnv = "FILESHED_TEST_ALONE"

// aloneCodes prefixes the line where a child reports the error codes its test provoked (the
// parent's catalogue check counts them).
const aloneCodes = "alone: codes provoked:"

// alone runs t's test in a child process of its own, this test binary re-executed with
// -test.run naming t (as the kill -9 tests run the server), and answers false: the caller
// returns at once, t runs beside the package's other parallel tests, and its verdict (pass,
// fail, skip) and its log are the child's. In the child it answers true and the caller goes
// on: the only test of its process, so what it measures or changes process-wide is its own
// (the live heap and the allocation counters, a package variable, SQLite's heap limit).
// The first statement of a test that measures or changes process-wide state (issue 34).
func alone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		t.Cleanup(func() {
			var codes []string
			seen.Range(func(k, _ any) bool { codes = append(codes, k.(string)); return true })
			fmt.Println(aloneCodes, strings.Join(codes, " "))
		})
		return true
	}
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.v", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), aloneEnv+"="+t.Name(), "FILESHED_SKIP_CATALOGUE=1")
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if codes, ok := strings.CutPrefix(line, aloneCodes); ok {
			for _, c := range strings.Fields(codes) {
				seen.Store(c, true)
			}
		}
	}
	switch {
	case err == nil && strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Logf("in a process of its own:\n%s", out)
	case err == nil && strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skipf("skipped in its process:\n%s", out)
	default:
		t.Fatalf("in a process of its own: %v\n%s", err, out)
	}
	return false
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

package testtool

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// aloneEnv names, in the environment of a child test process, the test it runs alone.
const aloneEnv = "FILESHED_TEST_ALONE"

// Alone runs t's test in a child process of its own, the test binary re-executed with
// -test.run naming t (and env added to its environment), and answers false: the caller
// returns at once, t runs beside the package's other parallel tests, and its verdict (pass,
// fail, skip) and its log are the child's; line, when not nil, is given each line the child
// printed. In the child it answers true and the caller goes on: the only test of its
// process, so what it measures or changes process-wide is its own (the live heap and the
// allocation counters, a package variable, a resource limit, SQLite's heap limit). The
// first statement of a test that measures or changes process-wide state (issue 34):
//
//	if !testtool.Alone(t, nil, nil) {
//		return
//	}
//
// A package whose TestMain answers differently to arguments or variables must leave the
// child's -test.* run to m.Run.
func Alone(t *testing.T, env []string, line func(string)) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
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
	cmd.Env = append(append(os.Environ(), aloneEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	if line != nil {
		for _, l := range strings.Split(string(out), "\n") {
			line(l)
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

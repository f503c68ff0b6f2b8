package testtool

import (
	"fmt"
	"strings"
	"testing"
)

// recorder records a skip instead of skipping (a real skip would fail CI).
type recorder struct {
	testing.TB
	skipped string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func TestRequireNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := &recorder{TB: t}
	Require(r, "zipinfo")
	if !strings.Contains(r.skipped, "apt-get install unzip") {
		t.Fatalf("skip message %q", r.skipped)
	}
	r = &recorder{TB: t}
	Require(r, "cat")
	if r.skipped != "" {
		t.Fatalf("a base program skipped: %q", r.skipped)
	}
}

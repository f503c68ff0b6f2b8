// Package testtool lets a test that needs an optional system program skip where it is not
// installed, naming the Debian package to install. CI installs every package and fails on
// any skip (.ci/run), so a skip never hides a failure there.
package testtool

import (
	"os/exec"
	"testing"
)

// packages maps the optional programs the tests run to their Debian package; awk means
// gawk (commands run gawk --sandbox).
var packages = map[string]struct{ bin, pkg string }{
	"awk":     {"gawk", "gawk"},
	"gawk":    {"gawk", "gawk"},
	"zip":     {"zip", "zip"},
	"unzip":   {"unzip", "unzip"},
	"zipinfo": {"zipinfo", "unzip"},
	"jq":      {"jq", "jq"},
	"sqlite3": {"sqlite3", "sqlite3"},
	"file":    {"file", "file"},
	"curl":    {"curl", "curl"},
	"git":     {"git", "git"},
}

// Require skips t unless program is installed; programs not in the list above are part of
// every Linux base system (coreutils, grep, sed, ...) and never skip.
func Require(t testing.TB, program string) {
	t.Helper()
	p, ok := packages[program]
	if !ok {
		return
	}
	if _, err := exec.LookPath(p.bin); err != nil {
		t.Skipf("%s is not installed: apt-get install %s (CI installs it)", p.bin, p.pkg)
	}
}

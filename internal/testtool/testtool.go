// Package testtool holds what the tests of several packages share: a skip, naming the Debian
// package, for a test that needs an optional system program where it is not installed (CI
// installs every package and fails on any skip, .ci/run, so a skip never hides a failure
// there), a log buffer safe for concurrent use, a higher default -parallel for packages
// whose tests mostly wait, and a temporary directory in memory for trees of many entries.
package testtool

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// packages maps the optional programs the tests run to their Debian package; awk means
// gawk (commands run gawk --sandbox).
var packages = map[string]struct{ bin, pkg string }{
	"awk":       {"gawk", "gawk"},
	"gawk":      {"gawk", "gawk"},
	"zip":       {"zip", "zip"},
	"unzip":     {"unzip", "unzip"},
	"zipinfo":   {"zipinfo", "unzip"},
	"jq":        {"jq", "jq"},
	"sqlite3":   {"sqlite3", "sqlite3"},
	"file":      {"file", "file"},
	"curl":      {"curl", "curl"},
	"git":       {"git", "git"},
	"rg":        {"rg", "ripgrep"},
	"pdftotext": {"pdftotext", "poppler-utils"},
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

// Buffer is a bytes.Buffer that a server's or a process's writer and the test's reader may
// use at once (a log sink read while the server runs).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ParallelAtLeast raises -test.parallel (the number of parallel tests run at once, GOMAXPROCS
// by default) to n, unless the command line gives it: for a TestMain whose package's tests
// mostly wait on another process (a database server, a subprocess), where the cores alone
// would leave the machine idle. Call it in TestMain before m.Run.
func ParallelAtLeast(n int) {
	testing.Init()
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); p != nil && !given {
		if cur, err := strconv.Atoi(p.Value.String()); err == nil && cur < n {
			_ = p.Value.Set(strconv.Itoa(n))
		}
	}
}

// RegularSize is the size of the regular files under dir (0 when dir does not exist): what
// the kernel's reconcile measures of a folder, for the tests that compare with it.
func RegularSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p == dir && errors.Is(err, fs.ErrNotExist) {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

package handlers_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// zipAt writes the archive gen produces at rel under the storage base (setup only),
// streamed to disk.
func (e *env) zipAt(rel string, gen func(io.Writer) error) {
	e.t.Helper()
	p := filepath.Join(e.base, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := gen(f); err != nil {
		e.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		e.t.Fatal(err)
	}
}

// zipOf is a generator of a zip made of entries.
func zipOf(es ...ziptest.Entry) func(io.Writer) error {
	return func(w io.Writer) error { return ziptest.Build(w, es...) }
}

// snapshot lists every path under dir with its type and content (files), to prove that a
// failed call changed nothing.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			line += " " + string(b[:min(len(b), 64)])
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// zipEntries is the sorted entry names of the zip file at p.
func zipEntries(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}

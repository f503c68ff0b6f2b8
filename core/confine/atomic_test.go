package confine

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
)

// failingReader yields some bytes, then an error: a client that hangs up.
type failingReader struct{ sent bool }

var errHangUp = errors.New("client hung up")

func (r *failingReader) Read(p []byte) (int, error) {
	if r.sent {
		return 0, errHangUp
	}
	r.sent = true
	return copy(p, "partial new cont"), nil
}

func TestWriteAtomic(t *testing.T) {
	z := newZone(t)
	z.write("old.txt", "old content")
	if err := os.Chmod(z.host("old.txt"), 0o750); err != nil { // owner's bits kept, group's dropped
		t.Fatal(err)
	}
	z.write("dir/keep", "x")
	z.write("file", "x")
	z.write("target.txt", "before")
	z.link("target.txt", "in_link")
	z.link("dir/new_target", "dangling_in")
	tests := []struct {
		name    string
		path    string
		content string
		err     error
		check   string // host file that must hold content afterwards
		mode    os.FileMode
	}{
		{"new file", "new.txt", "hello", nil, "new.txt", 0o600},
		{"new file in a subdirectory", "dir/new.txt", "sub", nil, "dir/new.txt", 0o600},
		{"replace keeps the owner's bits only", "old.txt", "new content", nil, "old.txt", 0o700},
		{"empty content", "empty", "", nil, "empty", 0o600},
		{"cleaned name", `dir\.\other`, "c", nil, "dir/other", 0o600},
		{"symlink inside writes the target", "in_link", "after", nil, "target.txt", 0o600},
		{"dangling symlink inside creates the target", "dangling_in", "made", nil, "dir/new_target", 0o600},
		{"directory", "dir", "x", ErrIsDir, "", 0},
		{"zone root", "", "x", ErrIsDir, "", 0},
		{"parent is a file", "file/x", "x", ErrNotDir, "", 0},
		{"grandparent is a file", "file/sub/x", "x", ErrNotDir, "", 0},
		{"missing parent", "nodir/x", "x", fs.ErrNotExist, "", 0},
		{"escape", "../data_evil/secret", "pwned", ErrEscape, "", 0},
		{"absolute", "/etc/passwd", "pwned", ErrEscape, "", 0},
		{"NUL", "a\x00", "x", ErrInvalid, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := z.fs.WriteAtomic(tt.path, strings.NewReader(tt.content), 0o600)
			z.expect(err, tt.err)
			z.noTemps()
			z.secretIntact()
			if tt.err != nil {
				return
			}
			if n != int64(len(tt.content)) {
				t.Fatalf("wrote %d bytes, want %d", n, len(tt.content))
			}
			if got := readHost(t, z.host(tt.check)); got != tt.content {
				t.Fatalf("content %q, want %q", got, tt.content)
			}
			if fi, _ := os.Stat(z.host(tt.check)); fi.Mode().Perm() != tt.mode {
				t.Fatalf("mode %v, want %v", fi.Mode().Perm(), tt.mode)
			}
		})
	}
	if fi, err := os.Lstat(z.host("in_link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("WriteAtomic through a link replaced the link")
	}
	if readHost(t, z.host("dir/keep")) != "x" {
		t.Fatal("directory content changed")
	}
}

// TestWriteAtomicFailureKeepsOldContent: a reader failing mid-way leaves the
// old content and no temporary file.
func TestWriteAtomicFailureKeepsOldContent(t *testing.T) {
	z := newZone(t)
	z.write("f.txt", "old content")
	for _, name := range []string{"f.txt", "brand_new.txt"} {
		t.Run(name, func(t *testing.T) {
			n, err := z.fs.WriteAtomic(name, &failingReader{}, 0o600)
			z.expect(err, errHangUp)
			if n != 0 {
				t.Fatalf("reported %d bytes written on failure", n)
			}
			z.noTemps()
		})
	}
	if got := readHost(t, z.host("f.txt")); got != "old content" {
		t.Fatalf("old content lost: %q", got)
	}
	if _, err := os.Stat(z.host("brand_new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("failed write created the file: %v", err)
	}
}

// TestWriteAtomicConcurrent: eight writers of one file; the survivor is one
// whole content, never a mix.
func TestWriteAtomicConcurrent(t *testing.T) {
	z := newZone(t)
	const size = 1 << 20
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			content := bytes.Repeat([]byte{byte('a' + i)}, size)
			for range 5 {
				if _, err := z.fs.WriteAtomic("shared.bin", bytes.NewReader(content), 0o600); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := readHost(t, z.host("shared.bin"))
	if len(got) != size || strings.Count(got, got[:1]) != size {
		t.Fatalf("interleaved content: %d bytes, first %q", len(got), got[:1])
	}
	z.noTemps()
}

package core

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteOfAFileChangedMeanwhileIsFileLocked: a command of the zone (beside the write,
// outside its path lock) rewrites the file while a write streams its new content: in place,
// by a rename, or between the two reads of a streamed edit (ErrChangedMeanwhile from the
// producer). The write stops before its rename with FILE_LOCKED (busy: retry) naming the
// zone-relative path — it used to replace the file, dropping the command's change, or answer
// INTERNAL_ERROR — and the file keeps what the command wrote, with no temporary file left.
// An unchanged file is written.
func TestWriteOfAFileChangedMeanwhileIsFileLocked(t *testing.T) {
	t.Parallel()
	s, base := testService(t, nil)
	ctx := context.Background()
	c, err := NewCaller("u1", "", "", "", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	write := func(z *Zone, body io.Reader, size int64) error {
		tx, _, err := s.BeginWrite(ctx, c, z, "notes/a.txt", "", Edit{Tool: "Patch"})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Close()
		_, err = tx.WriteFile(Write{Size: size, Body: body})
		return err
	}
	for _, zone := range []string{"storage", "documents"} {
		z, err := s.ResolveZone(ctx, c, zone, "", true)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(z.fs.Dir(), "notes")
		file := filepath.Join(dir, "a.txt")
		commands := map[string]func(){
			"producer saw it": nil,
			"in place":        func() { os.WriteFile(file, []byte("by the command\n"), 0o600) },
			"by a rename": func() {
				os.WriteFile(file+".new", []byte("one\n"), 0o600) // same size, another file
				os.Rename(file+".new", file)
			},
		}
		for name, command := range commands {
			if err := write(z, strings.NewReader("one\n"), 4); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(file)
			var body io.Reader = io.MultiReader(strings.NewReader("one\ntw"), errReader{ErrChangedMeanwhile})
			if command != nil {
				body = io.MultiReader(strings.NewReader("one\n"), runs(command), strings.NewReader("two\n"))
			}
			err := write(z, body, 8)
			e, ok := AsError(err)
			if !ok || e.Code != FileLocked || !strings.Contains(e.Message, "notes/a.txt changed while it was edited") ||
				strings.Contains(e.Message, base) {
				t.Fatalf("%s, %s: %v", zone, name, err)
			}
			after, _ := os.ReadFile(file)
			if command == nil && string(after) != string(before) || command != nil && string(after) == "one\ntwo\n" {
				t.Fatalf("%s, %s: the file is now %q", zone, name, after)
			}
			if names, _ := os.ReadDir(dir); len(names) != 1 {
				t.Fatalf("%s, %s: left %v", zone, name, names)
			}
		}
		if err := write(z, strings.NewReader("one\ntwo\n"), 8); err != nil {
			t.Fatalf("%s: an unchanged file: %v", zone, err)
		}
	}
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// runs is a reader that runs fn at its first read and then ends.
func runs(fn func()) io.Reader { return &runReader{fn: fn} }

type runReader struct{ fn func() }

func (r *runReader) Read([]byte) (int, error) {
	if r.fn != nil {
		r.fn()
		r.fn = nil
	}
	return 0, io.EOF
}

// TestWriteThroughARetargetedSymlinkIsFileLocked: the file is a link, and a command points it
// at another file of the same size while the write streams: the write stops (FILE_LOCKED)
// instead of writing the new target with content built from the old one; both targets keep
// what they held.
func TestWriteThroughARetargetedSymlinkIsFileLocked(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	ctx := context.Background()
	c, err := NewCaller("u1", "", "", "", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.ResolveZone(ctx, c, "storage", "", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := z.fs.Dir()
	for name, content := range map[string]string{"t1.txt": "one\n", "t2.txt": "two\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("t1.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	tx, _, err := s.BeginWrite(ctx, c, z, "link.txt", "", Edit{Tool: "Patch"})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	retarget := func() {
		os.Remove(filepath.Join(dir, "link.txt"))
		os.Symlink("t2.txt", filepath.Join(dir, "link.txt"))
	}
	_, err = tx.WriteFile(Write{Size: 8, Body: io.MultiReader(strings.NewReader("one\n"), runs(retarget), strings.NewReader("new\n"))})
	if e, ok := AsError(err); !ok || e.Code != FileLocked {
		t.Fatalf("a link retargeted meanwhile: %v", err)
	}
	for name, want := range map[string]string{"t1.txt": "one\n", "t2.txt": "two\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s is now %q", name, got)
		}
	}
}

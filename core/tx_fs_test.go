package core

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/confine"
)

// TestTxFsWritesOnlyDeclaredPaths: the file system a transaction hands out writes the
// paths its steps declared (below a declared folder too, and the kernel's temporary names),
// and refuses every other write, wherever it lands once its links are resolved: a declared
// name that is a link to an undeclared file, a link in the parents, "..", an absolute path.
func TestTxFsWritesOnlyDeclaredPaths(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	ctx := context.Background()
	c := Caller{UserID: "u1", ConvID: "c"}
	z, err := s.ResolveZone(ctx, c, "storage", "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	root := z.fs.Dir()
	for _, d := range []string{"in", "out", "box", "tree/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"in/a.txt", "out/secret.txt", "tree/sub/x.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in/ok.txt":    "a.txt",             // a declared link to a declared file
		"in/link.txt":  "../out/secret.txt", // an undeclared link to an undeclared file
		"box/filelink": "../out/secret.txt", // below a declared folder, leading out of it
		"box/dirlink":  "../out",            // a parent below a declared folder, leading out
		"box/back":     "../in/a.txt",       // below a declared folder, leading to a declared file
		"box/spare":    "../out/secret.txt", // removed: the link itself, not its target
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.Begin(ctx, c, Edit{Tool: "Test", Steps: []Step{
		{Zone: z, Path: "in/a.txt", Op: OpWrite},
		{Zone: z, Path: "in/ok.txt", Op: OpWrite},
		{Zone: z, Path: "box", Op: OpAdd},
		{Zone: z, Path: "tree", Op: OpRemove},
		{Zone: z, Path: "out/secret.txt", Op: OpCopyFrom}, // read, not declared for writing
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	w := tx.Fs(z)
	write := func(name string) error {
		_, err := w.WriteAtomic(name, strings.NewReader("new\n"), 0o600)
		return err
	}
	temp, release := confine.HoldTemp()
	defer release()
	cases := []struct {
		name string
		op   func() error
		ok   bool
	}{
		{"declared file", func() error { return write("in/a.txt") }, true},
		{"declared link to a declared file", func() error { return write("in/ok.txt") }, true},
		{"new file in a declared folder", func() error { return write("box/new.txt") }, true},
		{"link in a declared folder to a declared file", func() error { return write("box/back") }, true},
		{"a link itself in a declared folder", func() error { return w.Remove("box/spare") }, true},
		{"below a declared folder", func() error { return w.Remove("tree/sub/x.txt") }, true},
		{"declared folder", func() error { return w.RemoveAll("tree") }, true},
		{"temporary name beside a declared file", func() error { return w.Mkdir(path.Join("in", temp), 0o700) }, true},
		{"below a temporary name", func() error { return write(path.Join("in", temp, "f")) }, true},
		{"read of anything", func() error { _, err := w.Stat("out/secret.txt"); return err }, true},
		{"undeclared file", func() error { return write("in/b.txt") }, false},
		{"undeclared folder", func() error { return w.MkdirAll("other/deep", 0o700) }, false},
		{"copy source", func() error { return write("out/secret.txt") }, false},
		{"undeclared link to an undeclared file", func() error { return write("in/link.txt") }, false},
		{"link below a declared folder to an undeclared file", func() error { return write("box/dirlink/../filelink") }, false},
		{"linked parent below a declared folder", func() error { return write("box/dirlink/new.txt") }, false},
		{"linked parent, an existing name", func() error { return w.Remove("box/dirlink/secret.txt") }, false},
		{"dot-dot out of a declared folder", func() error { return write("box/../out/secret.txt") }, false},
		{"absolute path", func() error { return write(filepath.Join(root, "out/secret.txt")) }, false},
		{"rename onto an undeclared name", func() error { return w.Rename("in/a.txt", "out/a.txt") }, false},
		{"open for writing", func() error {
			f, err := w.OpenFile("out/secret.txt", os.O_WRONLY|os.O_TRUNC, 0)
			if err == nil {
				f.Close()
			}
			return err
		}, false},
		{"temporary file renamed onto an undeclared name", func() error { return w.Rename(path.Join("in", temp, "f"), "out/f") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op()
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("written")
			}
		})
	}
	for _, name := range []string{"in/b.txt", "in/link.txt", "box/dirlink/new.txt", "out/secret.txt"} {
		if err := write(name); !errors.Is(err, ErrUndeclared) {
			t.Errorf("%s: %v, want ErrUndeclared", name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "out/secret.txt")); string(b) != "old\n" {
		t.Errorf("the undeclared file was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "out/new.txt")); err == nil {
		t.Error("a file was created through the linked parent")
	}
}

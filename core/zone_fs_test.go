package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestZoneFsReadsOnly: what a family gets of a zone's file system reads the zone (links
// inside it followed, "..", absolute paths and links out of it refused as by the zone's
// root) and writes nothing at run time either: a file it opens refuses a write, and its
// afero face (for afero's read helpers) refuses every write, so the zone is unchanged.
func TestZoneFsReadsOnly(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	c := Caller{UserID: "u1", ConvID: "c"}
	z, err := s.ResolveZone(context.Background(), c, "storage", "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	root := z.fs.Dir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"in.txt": "a.txt", "out.txt": filepath.Join(outside, "secret.txt"), "up": ".."} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	fsys := z.Fs()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a.txt", true}, {"in.txt", true}, {"out.txt", false}, {"up/secret.txt", false},
		{"../secret.txt", false}, {filepath.Join(outside, "secret.txt"), false}, {"a.txt\x00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fsys.Open(tc.name)
			if (err == nil) != tc.ok {
				t.Fatalf("open: %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				return
			}
			defer f.Close()
			if _, err := f.Write([]byte("x")); err == nil {
				t.Error("a file opened through the zone's ReadFs took a write")
			}
			if err := f.Truncate(0); err == nil {
				t.Error("a file opened through the zone's ReadFs was truncated")
			}
		})
	}
	a := fsys.Afero()
	writes := map[string]error{}
	_, writes["create"] = a.Create("new.txt")
	_, writes["open for writing"] = a.OpenFile("a.txt", os.O_RDWR|os.O_TRUNC, 0)
	writes["remove"] = a.Remove("a.txt")
	writes["remove all"] = a.RemoveAll("a.txt")
	writes["rename"] = a.Rename("a.txt", "b.txt")
	writes["mkdir"] = a.MkdirAll("d/e", 0o700)
	writes["chmod"] = a.Chmod("a.txt", 0o644)
	for what, err := range writes {
		if err == nil {
			t.Errorf("%s through the afero face succeeded", what)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("the zone holds %d entries, want the 4 planted", len(entries))
	}
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "kept\n" {
		t.Errorf("a.txt is %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a.txt mode changed: %v", err)
	}
}

package core

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMakeDirOnlyOnTheWayAndCharged: the folders a transaction's file system makes
// (TxFs.MakeDir) are its declared folders or those on the way to a declared place,
// resolved through links, and they are charged to the reservation Begin made from
// Edit.Quota; anything else is refused before the disk is touched, and so is a
// transaction that declared no quota.
func TestMakeDirOnlyOnTheWayAndCharged(t *testing.T) {
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
	if err := os.Mkdir(filepath.Join(root, "elsewhere"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureUsage(ctx, z.Owner); err != nil {
		t.Fatal(err)
	}
	before, err := s.db.Usage(ctx, z.Owner)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(ctx, c, Edit{Tool: "Test", Quota: &Quota{Size: -1}, Steps: []Step{
		{Zone: z, Path: "a/b/f.txt", Op: OpWrite}, {Zone: z, Path: "box", Op: OpAdd}}})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	_, err = tx.Apply(func() (Change, error) {
		w := tx.Fs(z)
		for _, tc := range []struct {
			dir string
			ok  bool
		}{
			{"a/b", true}, {"a", true}, {"box/in/deep", true}, {"x", false}, {"out/b", false},
			{"../a", false}, {"/tmp/a", false}, {"a/../x", false},
		} {
			err := w.MakeDir(tc.dir)
			if (err == nil) != tc.ok {
				t.Errorf("MakeDir(%q): %v, want ok=%v", tc.dir, err, tc.ok)
			}
		}
		return Change{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"x", "elsewhere/b", "a/b", "box/in/deep"} {
		_, err := os.Stat(filepath.Join(root, d))
		if want := d == "a/b" || d == "box/in/deep"; (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", d, err == nil, want)
		}
	}
	after, err := s.db.Usage(ctx, z.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Files - before.Files; got != 5 { // a, a/b, box, box/in, box/in/deep
		t.Errorf("the folders made were charged %d names, want 5", got)
	}
	bare, err := s.Begin(ctx, c, Edit{Tool: "Test", Steps: []Step{{Zone: z, Path: "c/f.txt", Op: OpWrite}}})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if err := bare.Fs(z).MakeDir("c"); !errors.Is(err, ErrNoQuota) {
		t.Errorf("MakeDir without Edit.Quota: %v, want ErrNoQuota", err)
	}
}

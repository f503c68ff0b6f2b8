package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// TestSweepEditzones: shed_maintenance's sweep of the editzones is the kernel's. A working
// copy its conversation holds the lock of stays; an orphan (no lock, or the lock is another
// conversation's) goes and its bytes are given back exactly; a link planted in the editzone
// goes as a link, its target in the zone untouched; what is left is reported by name.
func TestSweepEditzones(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	ctx := context.Background()
	bob := Caller{UserID: "bob", ConvID: "c1"}
	z, err := s.ResolveZone(ctx, bob, "storage", "", true)
	must(t, err)
	defer z.Close()
	put("target.md", "the zone's file")(t, z.fs.Dir())
	ez := EditzoneDir(z.Space, "c1")
	for p, content := range map[string]string{"kept.md": "held", "orphan.md": "no lock", "d/stolen.md": "c2's lock"} {
		put(p, content)(t, ez)
	}
	must(t, os.Symlink(filepath.Join(z.fs.Dir(), "target.md"), filepath.Join(ez, "link.md")))
	for p, conv := range map[string]string{"kept.md": "c1", "d/stolen.md": "c2"} {
		_, err := s.db.AcquireLock(ctx, store.Lock{ZoneKey: zoneKey(z), Path: p, UserID: "bob", ConvID: conv, Since: time.Now()}, time.Hour)
		must(t, err)
	}
	_, _, err = s.Reconcile(ctx, z.Owner)
	must(t, err)
	removed, err := s.SweepEditzones(ctx, z)
	must(t, err)
	slices.Sort(removed)
	if want := []string{"Storage/editzone/c1/d/stolen.md", "Storage/editzone/c1/link.md", "Storage/editzone/c1/orphan.md"}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for p, want := range map[string]bool{"kept.md": true, "orphan.md": false, "d": false, "link.md": false} {
		if _, err := os.Lstat(filepath.Join(ez, p)); (err == nil) != want {
			t.Errorf("%s present=%v, want %v", p, err == nil, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(z.fs.Dir(), "target.md")); err != nil || string(b) != "the zone's file" {
		t.Errorf("the link's target changed: %q %v", b, err)
	}
	recorded, err := s.db.Usage(ctx, z.Owner)
	must(t, err)
	measured, _, err := s.Reconcile(ctx, z.Owner)
	must(t, err)
	if recorded != measured {
		t.Errorf("recorded usage %+v after the sweep, the disk holds %+v: the copies' bytes were not given back", recorded, measured)
	}
}

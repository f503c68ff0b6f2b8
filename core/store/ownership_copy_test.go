package store

import (
	"context"
	"slices"
	"testing"
)

// TestCopyOwnership: the first half of a crash-safe rename keeps the source records and
// puts copies under the destination (replacing what was there), with exact prefixes.
func TestCopyOwnership(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		seedOwnership(t, d, map[string][]string{"g": {"a", "a/x.txt", "a/sub/y.txt", "a_b/w.txt", "ab/z.txt", "c/old.txt"}, "h": {"a/x.txt"}})
		if err := d.CopyOwnership(ctx, "g", "a", "c"); err != nil {
			t.Fatal(err)
		}
		want := []string{"a", "a/sub/y.txt", "a/x.txt", "a_b/w.txt", "ab/z.txt", "c", "c/sub/y.txt", "c/x.txt"}
		if got := ownedPaths(t, d, "g"); !slices.Equal(got, want) {
			t.Fatalf("paths = %v, want %v", got, want)
		}
		if got := ownedPaths(t, d, "h"); !slices.Equal(got, []string{"a/x.txt"}) {
			t.Fatalf("other group touched: %v", got)
		}
		for _, bad := range [][2]string{{"a", "a"}, {"a", "a/b"}, {"a/x.txt", "a"}, {"", "b"}} {
			if err := d.CopyOwnership(ctx, "g", bad[0], bad[1]); err == nil {
				t.Errorf("CopyOwnership(%q, %q) accepted", bad[0], bad[1])
			}
		}
	})
}

// TestOwnershipUnder: one path and everything below it, or the whole group.
func TestOwnershipUnder(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		seedOwnership(t, d, map[string][]string{"g": {"a", "a/x.txt", "a%/y.txt", "ab.txt"}, "h": {"a/z.txt"}})
		paths := func(p string) []string {
			recs, err := d.OwnershipUnder(ctx, "g", p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, o := range recs {
				if o.Owner != "alice" || o.Mode != "owner" || !o.Created.Equal(t0) {
					t.Fatalf("record %+v", o)
				}
				out = append(out, o.Path)
			}
			return out
		}
		if got := paths("a"); !slices.Equal(got, []string{"a", "a/x.txt"}) {
			t.Fatalf("under a: %v", got)
		}
		if got := paths(""); len(got) != 4 {
			t.Fatalf("whole group: %v", got)
		}
		if got := paths("none"); got != nil {
			t.Fatalf("none: %v", got)
		}
	})
}

// TestAddOwnership: a record is created only where none exists.
func TestAddOwnership(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		seedOwnership(t, d, map[string][]string{"g": {"a.txt"}})
		for _, p := range []string{"a.txt", "b.txt"} {
			if err := d.AddOwnership(ctx, Ownership{GroupID: "g", Path: p, Owner: "bob", Mode: "group"}); err != nil {
				t.Fatal(err)
			}
		}
		a, _, _ := d.Ownership(ctx, "g", "a.txt")
		b, ok, _ := d.Ownership(ctx, "g", "b.txt")
		if a.Owner != "alice" || a.Mode != "owner" || !ok || b.Owner != "bob" {
			t.Fatalf("a = %+v, b = %+v", a, b)
		}
		if err := d.AddOwnership(ctx, Ownership{GroupID: "g", Path: "c", Owner: "bob", Mode: "all"}); err == nil {
			t.Fatal("bad mode accepted")
		}
	})
}

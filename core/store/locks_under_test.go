package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestLocksUnder(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		for _, p := range []string{"a", "a/b.txt", "a/c/d.txt", "ab.txt", "a_b/x", "z.txt"} {
			if _, err := d.AcquireLock(ctx, Lock{ZoneKey: "k", Path: p, UserID: "u", ConvID: "c", Since: t0}, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.AcquireLock(ctx, Lock{ZoneKey: "other", Path: "a/b.txt", UserID: "u", ConvID: "c", Since: t0}, time.Hour); err != nil {
			t.Fatal(err)
		}
		for dir, want := range map[string][]string{
			"a":   {"a", "a/b.txt", "a/c/d.txt"},
			"a/c": {"a/c/d.txt"},
			"q":   nil,
			"":    {"a", "a/b.txt", "a/c/d.txt", "a_b/x", "ab.txt", "z.txt"},
		} {
			ls, err := d.LocksUnder(ctx, "k", dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range ls {
				got = append(got, l.Path)
			}
			if !slices.Equal(got, want) {
				t.Errorf("LocksUnder(%q) = %v, want %v", dir, got, want)
			}
		}
	})
}

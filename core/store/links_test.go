package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestUseLinkIsAtomic: 10 parallel downloads of a link with one download left count one.
func TestUseLinkIsAtomic(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		now := time.Now()
		if err := d.AddLink(ctx, Link{ID: "one", Owner: "u", Zone: "storage", Path: "a", Expires: now.Add(time.Hour), MaxDownloads: 1}); err != nil {
			t.Fatal(err)
		}
		var ok, gone atomic.Int32
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				switch err := d.UseLink(ctx, "one", now); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ErrLinkGone):
					gone.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 1 || gone.Load() != 9 {
			t.Fatalf("10 parallel uses of a max-1 link: %d counted, %d refused", ok.Load(), gone.Load())
		}
		if err := d.UseLink(ctx, "missing", now); !errors.Is(err, ErrNoLink) {
			t.Fatalf("missing link: %v", err)
		}
		if _, err := d.RevokeLink(ctx, "one", "other", now); !errors.Is(err, ErrNoLink) {
			t.Fatalf("another owner's revoke: %v", err)
		}
		l, err := d.RevokeLink(ctx, "one", "u", now)
		if err != nil || l.State(now) != LinkRevoked {
			t.Fatalf("revoke: %v %v", l, err)
		}
		if err := d.AddLink(ctx, Link{ID: "old", Owner: "u", Zone: "storage", Path: "a", Expires: now.Add(-time.Second)}); err != nil {
			t.Fatal(err)
		}
		if err := d.UseLink(ctx, "old", now); !errors.Is(err, ErrLinkGone) {
			t.Fatalf("expired link used: %v", err)
		}
		ls, err := d.LinksOf(ctx, "u")
		if err != nil || len(ls) != 2 {
			t.Fatalf("LinksOf: %v %v", ls, err)
		}
	})
}

// TestLinkPageFlag: the page flag of shed_save_page's links is stored and read back, and a
// link stored before the flag existed (schema version 3) reads as a plain link.
func TestLinkPageFlag(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		ctx := context.Background()
		src := testSource(t, drv)
		d, err := OpenSource(src)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		// Back to version 3, with a link stored then.
		for _, q := range []string{`ALTER TABLE links DROP COLUMN page`, `ALTER TABLE usage DROP COLUMN files`, `DROP TABLE group_members`, `DROP TABLE server_keys`, `DROP TABLE replicas`, `DROP TABLE replica_owners`, `DROP TABLE state_identity`, `DROP TABLE commands`, `DROP TABLE journal`,
			`DELETE FROM schema_migrations WHERE version >= 4`,
			`INSERT INTO links (id, owner_id, zone, conv_id, group_id, path, is_dir, dev, ino, size, mtime_ns, created_us,
			expires_us, max_downloads) VALUES ('old', 'u', 'storage', '', '', 'a.html', 0, 1, 2, 3, 4, 5, 9999999999999999, 0)`} {
			if _, err := d.sql.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		d.Close()
		if d, err = OpenSource(src); err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		for _, l := range []Link{{ID: "page", Page: true}, {ID: "plain"}} {
			l.Owner, l.Zone, l.Path, l.Expires = "u", "storage", "a.html", now.Add(time.Hour)
			if err := d.AddLink(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		for id, want := range map[string]bool{"old": false, "page": true, "plain": false} {
			if l, err := d.LinkByID(ctx, id); err != nil || l.Page != want {
				t.Errorf("link %s: page %v (%v), want %v", id, l.Page, err, want)
			}
		}
	})
}

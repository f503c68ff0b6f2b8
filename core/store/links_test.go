package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestUseLinkIsAtomic(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "s.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
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
}
